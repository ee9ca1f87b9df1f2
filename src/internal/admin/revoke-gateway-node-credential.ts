import { type RouteHandler, z } from "@hono/zod-openapi";
import { revokeNodeCredential } from "../../domain/gateway/node-credentials";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { gatewayNodeCredentialSchema, presentGatewayNodeCredential } from "../../resources/gateway-node";
import { tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminRevokeGatewayNodeCredential",
    method: "delete",
    path: "/gateway-nodes/{id}",
    tags,
    summary: "Revoke a gateway node's credential",
    description:
      "The change feed opened with it closes before the answer (code 4001), its calls answer 401 within a second " +
      "everywhere, and the shares its node was leased lapse at their expiry, unrenewed. Revoking twice is harmless.",
    request: {
      params: z.object({ id: idParam("gatewayNode").openapi({ param: { name: "id", in: "path" } }) }),
    },
    errors: ["not_found"],
    responses: { 200: jsonContent(gatewayNodeCredentialSchema, "The revoked credential.") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const revoked = await revokeNodeCredential(c.get("ctx"), c.req.valid("param").id);
  return c.json(presentGatewayNodeCredential(revoked), 200);
};

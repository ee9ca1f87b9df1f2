import { type RouteHandler, z } from "@hono/zod-openapi";
import { revokeApiKey } from "../../domain/api-keys/api-keys";
import type { AppEnv } from "../../env";
import { id, idParam } from "../../platform/fields";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminRevokeApiKey",
    method: "delete",
    path: "/api-keys/{id}",
    tags,
    summary: "Revoke an API key",
    description: "Takes effect on the key's next call, everywhere. Revoking twice is harmless.",
    request: { params: z.object({ id: idParam("apiKey").openapi({ param: { name: "id", in: "path" } }) }) },
    errors: ["not_found"],
    responses: {
      200: jsonContent(z.object({ id: id("apiKey"), revoked: z.literal(true) }).openapi("RevokedApiKey"), "Revoked."),
    },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await revokeApiKey(c.get("ctx"), id);
  return c.json({ id, revoked: true as const }, 200);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { releaseLease } from "../../domain/gateway/authorize";
import type { AppEnv } from "../../env";
import { token } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";

export const route = internalRoute(
  {
    operationId: "releaseLease",
    method: "post",
    path: "/release",
    tags: ["Gateway"],
    summary: "Release a lease",
    description: "Frees the concurrency slot. Releasing twice, or an expired lease, is harmless.",
    request: {
      body: jsonBody(
        z
          .strictObject({ lease: token(/^[\x21-\x7E]+$/, 128) })
          .openapi("GatewayRelease", { example: { lease: "s1a2b3c4d5e.Xy7Qw2Er9Ty1Ui3Op5As" } }),
      ),
    },
    responses: {
      200: jsonContent(z.object({ released: z.boolean() }).openapi("GatewayReleased"), "Whether a slot was freed."),
    },
  },
  "GatewayToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json({ released: await releaseLease(c.get("ctx"), c.req.valid("json").lease) }, 200);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { releaseLease } from "../../domain/gateway/authorize";
import type { AppEnv } from "../../env";
import { ipAddress, token } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";

export const route = internalRoute(
  {
    operationId: "releaseLease",
    method: "post",
    path: "/release",
    tags: ["Gateway"],
    summary: "Release a lease",
    description:
      "Frees the concurrency slot. Releasing twice, or an expired lease, is harmless. For a sticky session's " +
      "connection, `exit_ip` (the exit it used) pins the session when it has no exit yet, and moves the pin when " +
      "`repinned` is true: later decisions for the session return it.",
    request: {
      body: jsonBody(
        z
          .strictObject({
            lease: token(/^[\x21-\x7E]+$/, 128),
            exit_ip: ipAddress().optional().openapi({ description: "The exit the connection used (sticky sessions)." }),
            repinned: z.boolean().optional().openapi({ description: "The upstream IP was reassigned mid-session." }),
          })
          .openapi("GatewayRelease", {
            example: { lease: "s1a2b3c4d5e.Xy7Qw2Er9Ty1Ui3Op5As", exit_ip: "203.0.113.7", repinned: false },
          }),
      ),
    },
    responses: {
      200: jsonContent(z.object({ released: z.boolean() }).openapi("GatewayReleased"), "Whether a slot was freed."),
    },
  },
  "GatewayToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { lease, exit_ip: exitIp, repinned } = c.req.valid("json");
  const pin = exitIp === undefined ? undefined : { exitIp, repinned: repinned ?? false };
  return c.json({ released: await releaseLease(c.get("ctx"), lease, pin) }, 200);
};

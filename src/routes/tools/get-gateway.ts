import { type RouteHandler, z } from "@hono/zod-openapi";
import { MAX_SESSTIME_MINUTES } from "../../domain/gateway/username";
import type { AppEnv } from "../../env";
import { integer, text, token } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";

const gatewaySchema = z
  .object({
    host: text(253, 1).openapi({ description: "The gateway's host name or address.", example: "gw.example.com" }),
    port: integer(1, 65_535).openapi({ description: "One port for HTTP, HTTPS (CONNECT) and SOCKS5.", example: 7777 }),
    username_prefix: token(/^[a-z0-9]{1,16}$/, 16).openapi({
      description:
        "The fixed start of every gateway username: `{prefix}_{name}-type-{res|mob}-region-{cc}[-state-{s}]" +
        "[-city-{c}][-asn-{n}][-session-{id}-sesstime-{minutes}]` (residential and mobile), `{prefix}_{name}` on ISP IPs.",
      example: "user",
    }),
    max_sesstime_minutes: z
      .object({ residential: integer(1, 1440), mobile: integer(1, 1440) })
      .openapi({ description: "The longest sticky session (`sesstime`) per gateway product." }),
  })
  .openapi("Gateway");

export const route = apiRoute({
  operationId: "getGateway",
  method: "get",
  path: "/gateway",
  tags: ["Tools"],
  scope: "any key",
  summary: "Gateway connection settings",
  description:
    "Where the proxy gateway listens and how its usernames start: what a client needs to build a proxy string " +
    "(`host:port:user:pass`) for a sub-user. Open to every key, whatever its scopes.",
  responses: { 200: jsonContent(gatewaySchema, "The gateway's settings.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { GATEWAY_HOST, GATEWAY_PORT, GATEWAY_USER_PREFIX } = c.env;
  return c.json(
    {
      host: GATEWAY_HOST,
      port: Number(GATEWAY_PORT),
      username_prefix: GATEWAY_USER_PREFIX,
      max_sesstime_minutes: MAX_SESSTIME_MINUTES,
    },
    200,
  );
};

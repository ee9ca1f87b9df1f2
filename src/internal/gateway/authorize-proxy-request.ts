import { type RouteHandler, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { authorizeProxyRequest } from "../../domain/gateway/authorize";
import type { GatewayDecision } from "../../domain/gateway/decision";
import { targetRulesOnWire } from "../../durable-objects/subuser-gate/contract";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { countryCode, id, integer, ipAddress, ipText, text, timestamp, token } from "../../platform/fields";
import { gatewayErrorCodes } from "../../platform/gateway-rules";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { targetRulesSchema } from "../../resources/subuser";

const gatewayTargetSchema = z.object({
  type: z.enum(["res", "mob"]),
  region: token(/^[a-z]{2}$/, 2),
  state: token(/^[a-z0-9]{1,3}$/, 3).nullable(),
  city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
  asn: integer(0, 4_294_967_295).nullable(),
  session_id: token(/^[a-z0-9]{1,32}$/, 32).nullable(),
  sesstime: integer(1, 60).nullable().openapi({ description: "Minutes." }),
});

const ispTargetSchema = z.object({
  type: z.literal("isp"),
  ip: ipText(),
  port: integer(1, 65_535),
  batch_id: id("batch"),
  country: countryCode(),
  city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
  asn: integer(1, 4_294_967_295),
});

const decisionSchema = z
  .union([
    z.object({
      allow: z.literal(true),
      subuser: id("subuser"),
      product: z.enum(products),
      lease: token(/^[a-z0-9]+\.[0-9A-Za-z]+$/, 64)
        .nullable()
        .openapi({
          description:
            "Release it when the connection closes; expires by itself after 10 min. null for ISP (per-IP limits only).",
        }),
      cache_ttl_s: integer(0, 60),
      target: z.union([gatewayTargetSchema, ispTargetSchema]),
      session: z
        .object({
          id: id("session"),
          exit_ip: ipText()
            .nullable()
            .openapi({ description: "null: pick an exit; it is pinned by the session's first usage record." }),
          started_at: timestamp(),
          expires_at: timestamp(),
        })
        .nullable()
        .openapi({ description: "The sticky session of a username with session segments (null otherwise)." }),
      target_rules: targetRulesSchema.nullable().openapi({
        description:
          "The sub-user's target rules: each request's host (HTTP), CONNECT target and SOCKS5 target is checked " +
          "against them, and refused 403 target-denied. null: anywhere.",
      }),
    }),
    z.object({
      allow: z.literal(false),
      status: z.union([z.literal(400), z.literal(402), z.literal(403), z.literal(407), z.literal(429), z.literal(503)]),
      error_code: z.enum(gatewayErrorCodes).openapi({
        description:
          "400: bad-username, unknown-region, state-without-region, city-without-state, session-incomplete, " +
          "sesstime-out-of-range. 407: auth-failed, not-whitelisted. 402: bandwidth-exhausted (the account's pool " +
          "of the product is used up), traffic-limit-reached (the sub-user's monthly cap). 403: subuser-disabled, " +
          "product-not-allowed, subuser-expired, and for ISP ip-expired (grace period), ip-released, ip-provisioning. " +
          "402 also: daily-limit-reached, lifetime-limit-reached. " +
          "429: concurrent-limit, rps-limit (the only retryable ones).",
      }),
      service_code: z.literal(30002).optional(),
      retry_after_s: integer(1, 60).optional(),
    }),
  ])
  .openapi("GatewayDecision");

export const route = internalRoute(
  {
    operationId: "authorizeProxyRequest",
    method: "post",
    path: "/authorize",
    tags: ["Gateway"],
    summary: "Authorize a proxy request",
    description: "Called by the gateway for each proxy request. Always 200 with a decision; see docs/gateway.md.",
    request: {
      body: jsonBody(
        z
          .strictObject({
            username: text(512, 1),
            password: text(256).nullable().optional(),
            source_ip: ipAddress(),
            product: z.enum(products),
            dest_ip: ipAddress().optional().openapi({ description: "ISP only: the static IP the client addressed." }),
          })
          .openapi("GatewayAuthorizeRequest", {
            example: {
              username: "user_s1a2b3c4d5e-type-res-region-us-session-abc123-sesstime-10",
              password: "q3XvLr8TmWc2Zp9AbN4sKd7HfJ1uYe6G",
              source_ip: "198.51.100.23",
              product: "residential",
            },
          }),
      ),
    },
    responses: { 200: jsonContent(decisionSchema, "The decision.") },
  },
  "GatewayToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { source_ip, dest_ip, ...request } = c.req.valid("json");
  const decision = await authorizeProxyRequest(c.get("ctx"), { ...request, sourceIp: source_ip, destIp: dest_ip });
  return c.json(presentDecision(decision), 200);
};

function presentDecision(decision: GatewayDecision): z.infer<typeof decisionSchema> {
  if (!decision.allow) {
    return {
      allow: false,
      status: decision.status,
      error_code: decision.errorCode,
      ...(decision.serviceCode ? { service_code: decision.serviceCode, retry_after_s: decision.retryAfterS } : {}),
    };
  }
  const { target } = decision;
  return {
    allow: true,
    subuser: decision.subuserId,
    product: decision.product,
    lease: decision.lease,
    cache_ttl_s: decision.cacheTtlS,
    target_rules: targetRulesOnWire(decision.targetRules),
    session: decision.session && {
      id: decision.session.id,
      exit_ip: decision.session.exitIp,
      started_at: toIso(decision.session.startedAt),
      expires_at: toIso(decision.session.expiresAt),
    },
    target:
      target.type === "isp"
        ? {
            type: "isp",
            ip: target.ip,
            port: target.port,
            batch_id: target.batchId,
            country: target.country,
            city: target.city,
            asn: target.asn,
          }
        : {
            type: target.type,
            region: target.region,
            state: target.state,
            city: target.city,
            asn: target.asn,
            session_id: target.sessionId,
            sesstime: target.sesstime,
          },
  };
}

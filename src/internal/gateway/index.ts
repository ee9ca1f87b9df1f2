import { OpenAPIHono, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { domainContext } from "../../domain/context";
import { authorizeProxyRequest, releaseLease } from "../../domain/gateway/authorize";
import type { AppEnv } from "../../env";
import { internalAuth } from "../../middleware/internal-auth";
import { parseIp } from "../../platform/ip";
import { internalRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { validationHook } from "../../platform/validation";

const tags = ["Internal: gateway"];

const targetSchema = z.object({
  type: z.enum(["res", "mob"]),
  region: z.string(),
  state: z.string().nullable(),
  city: z.string().nullable(),
  asn: z.number().int().nullable(),
  session_id: z.string().nullable(),
  sesstime: z.number().int().nullable(),
});

const ispTargetSchema = z.object({
  type: z.literal("isp"),
  ip: z.string(),
  port: z.number().int(),
  batch_id: z.string(),
  country: z.string(),
  city: z.string().nullable(),
  asn: z.number().int(),
});

const decisionSchema = z
  .union([
    z.object({
      allow: z.literal(true),
      subuser: z.string(),
      product: z.enum(products),
      lease: z.string().nullable().openapi({
        description:
          "Release it when the connection closes; expires by itself after 10 min. null for ISP (per-IP limits only).",
      }),
      cache_ttl_s: z.number().int().min(0).max(60),
      target: z.union([targetSchema, ispTargetSchema]),
    }),
    z.object({
      allow: z.literal(false),
      status: z.union([z.literal(400), z.literal(403), z.literal(407), z.literal(429)]),
      error_code: z.string().openapi({
        description:
          "400: bad-username, unknown-region, state-without-region, city-without-state, session-incomplete, " +
          "sesstime-out-of-range. 407: auth-failed, not-whitelisted. 403: subuser-disabled, product-not-allowed, " +
          "and for ISP ip-expired (grace period), ip-released, ip-provisioning. " +
          "429: concurrent-limit, rps-limit (the only retryable ones).",
      }),
      service_code: z.literal(30002).optional(),
      retry_after_s: z.number().int().optional(),
    }),
  ])
  .openapi("GatewayDecision");

const authorizeRoute = internalRoute(
  {
    method: "post",
    path: "/authorize",
    tags,
    summary: "Authorize a proxy request",
    description: "Called by the gateway for each proxy request. Always 200 with a decision; see docs/gateway.md.",
    request: {
      body: jsonBody(
        z
          .strictObject({
            username: z.string().min(1).max(512),
            password: z.string().max(256).nullable().optional(),
            source_ip: z.string().refine((ip) => parseIp(ip) !== null, "must be an IPv4 or IPv6 address"),
            product: z.enum(products),
            dest_ip: z
              .string()
              .refine((ip) => parseIp(ip) !== null, "must be an IPv4 or IPv6 address")
              .optional()
              .openapi({ description: "ISP only: the static IP the client addressed." }),
          })
          .openapi("GatewayAuthorizeRequest", {
            example: {
              username: "user_s1a2b3c4d5e-type-res-region-us-session-abc123-sesstime-10",
              password: "q3Xv…",
              source_ip: "198.51.100.23",
              product: "residential",
            },
          }),
      ),
    },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(decisionSchema, "The decision.") },
  },
  "GatewayToken",
);

const releaseRoute = internalRoute(
  {
    method: "post",
    path: "/release",
    tags,
    summary: "Release a lease",
    description: "Frees the concurrency slot. Releasing twice, or an expired lease, is harmless.",
    request: { body: jsonBody(z.strictObject({ lease: z.string().min(1).max(128) }).openapi("GatewayRelease")) },
    errors: ["invalid_request"],
    responses: {
      200: jsonContent(z.object({ released: z.boolean() }).openapi("GatewayReleased"), "Whether a slot was freed."),
    },
  },
  "GatewayToken",
);

/** The small contract the proxy gateway calls, behind GATEWAY_TOKEN (docs/gateway.md). */
export function gatewayApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use("*", internalAuth("GATEWAY_TOKEN"));
  app.openapi(authorizeRoute, async (c) => {
    return c.json(await authorizeProxyRequest(domainContext(c.env), c.req.valid("json")), 200);
  });
  app.openapi(releaseRoute, async (c) => {
    return c.json({ released: await releaseLease(domainContext(c.env), c.req.valid("json").lease) }, 200);
  });
  return app;
}

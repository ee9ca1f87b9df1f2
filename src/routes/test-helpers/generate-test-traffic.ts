import { type RouteHandler, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { DEFAULT_BYTES_PER_REQUEST, generateTraffic, MAX_TEST_REQUESTS } from "../../domain/sandbox/traffic";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { countryCode, decimal, id, idParam, instant, integer, list, timestamp, token } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { tags } from "./shared";

const body = z
  .strictObject({
    subuser: idParam("subuser"),
    product: z.enum(products).optional().openapi({ description: "Default: the sub-user's first product." }),
    requests: integer(1, MAX_TEST_REQUESTS),
    from: instant().optional().openapi({ description: "Within the last 90 days. Default: an hour before `to`." }),
    to: instant().optional().openapi({ description: "Exclusive; not in the future. Default: now." }),
    regions: list(
      countryCode().transform((code) => code.toLowerCase()),
      10,
    )
      .optional()
      .openapi({ description: 'Exit countries, cycled over the requests. Default: `["us"]`.' }),
    tags: list(token(/^[a-z0-9_-]{1,64}$/, 64), 10)
      .optional()
      .openapi({ description: "Tag header values, cycled over the requests. Default: none." }),
    error_rate: decimal({ unit: 0.001, min: 0, max: 1 }).optional().openapi({
      description: "Share of failed requests (502 `upstream-error`), spread evenly within each region. Default 0.",
    }),
    bytes_per_request: integer(1, 100_000_000)
      .optional()
      .openapi({ description: `Bytes in + out of each request. Default ${DEFAULT_BYTES_PER_REQUEST}.` }),
  })
  .openapi("TestTrafficCreate", {
    example: {
      subuser: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
      requests: 500,
      regions: ["us", "de"],
      tags: ["checkout"],
      error_rate: 0.02,
    },
  });

const result = z
  .object({
    subuser: id("subuser"),
    product: z.enum(products),
    requests: integer(1, MAX_TEST_REQUESTS),
    accepted: integer(0, MAX_TEST_REQUESTS).openapi({ description: "Records the ingestion accepted." }),
    errors: integer(0, MAX_TEST_REQUESTS),
    bytes: integer(0, Number.MAX_SAFE_INTEGER).openapi({ format: "int64" }),
    from: timestamp(),
    to: timestamp(),
  })
  .openapi("TestTraffic");

export const route = apiRoute({
  operationId: "generateTestTraffic",
  method: "post",
  path: "/test-helpers/traffic",
  tags,
  sandboxOnly: true,
  boundKeys: true,
  scope: { area: "traffic" },
  summary: "Generate traffic for a sub-user (sandbox)",
  description:
    "Reports `requests` proxy requests of the sub-user as the gateway would, through the real usage ingestion: " +
    "within seconds they show in traffic, the request log, the sub-user's monthly usage and the account's pool. " +
    "Deterministic: timestamps spread evenly over `from`..`to`, exits from 203.0.113.0/24, ASNs 64496+, errors " +
    "spread evenly at `error_rate` within each region. ISP traffic addresses the sub-user's active batch IPs. Sandbox keys only.",
  request: { body: jsonBody(body) },
  errors: ["subuser_not_found", "subuser_scope_mismatch", "gateway_refused"],
  responses: { 202: jsonContent(result, "Accepted: the requests are being ingested.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { subuser, spec, accepted, errors } = await generateTraffic(c.get("ctx"), c.get("principal"), {
    subuserId: input.subuser,
    product: input.product,
    requests: input.requests,
    from: input.from,
    to: input.to,
    regions: input.regions,
    tags: input.tags,
    errorRate: input.error_rate,
    bytesPerRequest: input.bytes_per_request,
  });
  return c.json(
    {
      subuser: subuser.id,
      product: spec.product,
      requests: spec.requests,
      accepted,
      errors,
      bytes: spec.requests * spec.bytesPerRequest,
      from: toIso(spec.from),
      to: toIso(spec.to),
    },
    202,
  );
};

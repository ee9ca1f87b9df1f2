import { type RouteHandler, z } from "@hono/zod-openapi";
import { replaceIp } from "../../domain/isp/batch-actions";
import type { AppEnv } from "../../env";
import { text, token, usdAmount } from "../../platform/fields";
import { fromMinor } from "../../platform/money";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { ispIpSchema, presentIp } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "replaceIspIp",
  method: "post",
  path: "/isp/ips/{ip_id}/replace",
  tags: ["ISP"],
  summary: "Replace one IP",
  description:
    "Free during the first 14 days after purchase; afterwards 10% of the batch (rounded up) per billing period is " +
    "free; further replacements are billed at the per-IP monthly rate. The old IP is released at once.",
  request: {
    params: z.object({ ip_id: token(/^[A-Za-z0-9_-]+$/, 64, "must be an id").openapi({ example: "ip_0000042" }) }),
    body: jsonBody(
      z
        .strictObject({ reason: text(500, 1).trim() })
        .openapi("IpReplace", { example: { reason: "blocked by target" } }),
    ),
  },
  errors: [
    "not_found",
    "subuser_scope_mismatch",
    "insufficient_balance",
    "budget_exceeded",
    "insufficient_inventory",
    "batch_not_active",
    "batch_changed",
  ],
  responses: {
    200: jsonContent(
      z
        .object({ replaced: ispIpSchema, ip: ispIpSchema, free: z.boolean(), charged_usd: usdAmount() })
        .openapi("IpReplacement"),
      "The new IP and what it cost.",
    ),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const request = { ipId: c.req.valid("param").ip_id, reason: c.req.valid("json").reason };
  const result = await replaceIp(c.get("ctx"), c.get("principal"), request);
  return c.json(
    {
      replaced: { ...presentIp(result.replaced), status: "released" as const },
      ip: presentIp(result.ip),
      free: result.free,
      charged_usd: fromMinor(result.chargedMinor),
    },
    200,
  );
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { replaceIp } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { fromMinor } from "../../platform/money";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { ispIpSchema, presentIp } from "../../schemas/commerce";

export const route = apiRoute({
  method: "post",
  path: "/isp/ips/{ip_id}/replace",
  tags: ["ISP"],
  summary: "Replace one IP",
  description:
    "Free during the first 14 days after purchase; afterwards 10% of the batch (rounded up) per billing period is " +
    "free; further replacements are billed at the per-IP monthly rate. The old IP is released at once.",
  request: {
    params: z.object({ ip_id: z.string().openapi({ example: "ip_0000042" }) }),
    body: jsonBody(
      z
        .strictObject({ reason: z.string().trim().min(1).max(500) })
        .openapi("IpReplace", { example: { reason: "blocked by target" } }),
    ),
  },
  errors: [
    "not_found",
    "subuser_scope_mismatch",
    "insufficient_balance",
    "insufficient_inventory",
    "batch_not_active",
    "batch_changed",
  ],
  responses: {
    200: jsonContent(
      z
        .object({ replaced: ispIpSchema, ip: ispIpSchema, free: z.boolean(), charged_usd: z.number() })
        .openapi("IpReplacement"),
      "The new IP and what it cost.",
    ),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  const request = { ipId: c.req.valid("param").ip_id, reason: c.req.valid("json").reason };
  const result = await replaceIp(domainContext(c.env), c.var.principal, account, request);
  return c.json(
    {
      replaced: { ...presentIp(result.replaced), status: "released" },
      ip: presentIp(result.ip),
      free: result.free,
      charged_usd: fromMinor(result.charged_minor),
    },
    200,
  );
};

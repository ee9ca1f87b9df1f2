import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { renewBatch } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { batchIdParam, batchSchema, presentBatch } from "../../schemas/commerce";

export const route = apiRoute({
  method: "post",
  path: "/isp/batches/{id}/renew",
  tags: ["ISP"],
  summary: "Renew a batch",
  description:
    "Debits quantity × price × months and extends `expires_at`; the IPs and password stay. A batch in its grace " +
    "period is renewed from now.",
  request: {
    params: batchIdParam,
    body: jsonBody(
      z.strictObject({ months: z.number().int().min(1).max(36) }).openapi("IspRenew", { example: { months: 1 } }),
    ),
  },
  errors: ["not_found", "subuser_scope_mismatch", "insufficient_balance", "batch_not_active", "batch_changed"],
  responses: { 200: jsonContent(batchSchema, "The renewed batch with its new expires_at.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const batch = await renewBatch(
    domainContext(c.env),
    c.var.principal,
    c.req.valid("param").id,
    c.req.valid("json").months,
  );
  return c.json(presentBatch(batch), 200);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { renewBatch } from "../../domain/isp/batch-actions";
import type { AppEnv } from "../../env";
import { integer } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { batchIdParam, batchSchema, presentBatch } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "renewIspBatch",
  method: "post",
  path: "/isp/batches/{id}/renew",
  tags: ["ISP"],
  summary: "Renew a batch",
  description:
    "Debits quantity × price × months and extends `expires_at`; the IPs and password stay. A batch in its grace " +
    "period is renewed from now.",
  request: {
    params: batchIdParam,
    body: jsonBody(z.strictObject({ months: integer(1, 36) }).openapi("IspRenew", { example: { months: 1 } })),
  },
  errors: [
    "not_found",
    "subuser_scope_mismatch",
    "insufficient_balance",
    "budget_exceeded",
    "batch_not_active",
    "batch_changed",
  ],
  responses: { 200: jsonContent(batchSchema, "The renewed batch with its new expires_at.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  return c.json(presentBatch(await renewBatch(c.get("ctx"), c.get("principal"), id, c.req.valid("json").months)), 200);
};

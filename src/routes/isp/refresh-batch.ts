import type { RouteHandler } from "@hono/zod-openapi";
import { refreshBatch } from "../../domain/isp/batch-actions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { batchIdParam, batchSchema, presentBatch } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "refreshIspBatch",
  method: "post",
  path: "/isp/batches/{id}/refresh",
  tags: ["ISP"],
  summary: "Refresh all IPs of a batch",
  description: "Replaces every IP; allowed once per billing period and uses up that period's free replacements.",
  request: { params: batchIdParam },
  errors: [
    "not_found",
    "subuser_scope_mismatch",
    "refresh_already_used",
    "batch_not_active",
    "insufficient_inventory",
    "batch_changed",
  ],
  responses: { 200: jsonContent(batchSchema, "The refreshed batch.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentBatch(await refreshBatch(c.get("ctx"), c.get("principal"), c.req.valid("param").id)), 200);
};

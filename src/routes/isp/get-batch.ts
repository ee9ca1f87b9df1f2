import type { RouteHandler } from "@hono/zod-openapi";
import { findBatch } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { batchIdParam, batchSchema, presentBatch } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "getIspBatch",
  method: "get",
  path: "/isp/batches/{id}",
  tags: ["ISP"],
  summary: "Get an ISP batch",
  description: "Status, period, renewal and the replacement allowance of one batch.",
  request: { params: batchIdParam },
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(batchSchema, "The batch.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentBatch(await findBatch(c.get("ctx"), c.get("principal"), c.req.valid("param").id)), 200);
};

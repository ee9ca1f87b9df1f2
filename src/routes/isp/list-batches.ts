import type { RouteHandler } from "@hono/zod-openapi";
import { listBatches } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { batchSchema, presentBatch } from "../../resources/isp-batch";

export const route = apiRoute({
  operationId: "listIspBatches",
  method: "get",
  path: "/isp/batches",
  tags: ["ISP"],
  summary: "List ISP batches",
  description: "Every batch of the account, newest first, released ones included.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(batchSchema), "A page of batches, newest first.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listBatches(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentBatch), 200);
};

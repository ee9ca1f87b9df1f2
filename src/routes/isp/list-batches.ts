import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { listBatches } from "../../domain/isp/batches";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { batchSchema, presentBatch } from "../../schemas/commerce";

export const route = apiRoute({
  method: "get",
  path: "/isp/batches",
  tags: ["ISP"],
  summary: "List ISP batches",
  request: { query: paginationQuery },
  errors: ["invalid_request", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(batchSchema), "A page of batches, newest first.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listBatches(domainContext(c.env), c.var.principal, query);
  return c.json(toPage(c, rows, query.limit, presentBatch), 200);
};

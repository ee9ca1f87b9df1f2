import type { RouteHandler } from "@hono/zod-openapi";
import { listBatchWhitelist } from "../../domain/whitelists/batch-whitelists";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { batchIdParam } from "../../resources/isp-batch";
import { batchWhitelistEntrySchema, presentBatchWhitelistEntry } from "../../resources/whitelist";

export const route = apiRoute({
  operationId: "listIspBatchWhitelist",
  method: "get",
  path: "/isp/batches/{id}/whitelist",
  tags: ["ISP"],
  summary: "List a batch's whitelist",
  description: "Source IPs that may use every IP of the batch without the password, newest first.",
  request: { params: batchIdParam, query: paginationQuery },
  paginated: true,
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(batchWhitelistEntrySchema), "A page of entries.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listBatchWhitelist(c.get("ctx"), c.get("principal"), c.req.valid("param").id, query);
  return c.json(toPage(c, rows, query.limit, presentBatchWhitelistEntry), 200);
};

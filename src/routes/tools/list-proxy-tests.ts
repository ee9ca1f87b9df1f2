import type { RouteHandler } from "@hono/zod-openapi";
import { listProxyTests } from "../../domain/tools/proxy-tests";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentProxyTest, proxyTestSchema } from "../../resources/proxy-test";

export const route = apiRoute({
  operationId: "listProxyTests",
  method: "get",
  path: "/tools/proxy-tests",
  tags: ["Tools"],
  boundKeys: true,
  summary: "List proxy test runs",
  description:
    "The account's proxy test runs of the last 24 hours, newest first, to compare them: those of the key's " +
    "products (and those of usernames the grammar refused).",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(proxyTestSchema), "A page of test runs.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const records = await listProxyTests(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, records, query.limit, presentProxyTest), 200);
};

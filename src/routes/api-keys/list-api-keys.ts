import type { RouteHandler } from "@hono/zod-openapi";
import { listKeys } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { apiKeySchema, presentApiKey } from "../../resources/api-key";

export const route = apiRoute({
  operationId: "listApiKeys",
  method: "get",
  path: "/api-keys",
  tags: ["API keys"],
  boundKeys: true,
  summary: "List API keys",
  description: "The account's active keys, newest first (a sandbox key lists the sandbox's). Tokens are never shown.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(apiKeySchema), "A page of API keys.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listKeys(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentApiKey), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { listGrants } from "../../domain/oauth/grants";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { oauthGrantSchema, presentOAuthGrant } from "../../resources/oauth-grant";

export const route = apiRoute({
  operationId: "listOAuthGrants",
  method: "get",
  path: "/oauth/grants",
  tags: ["Connected applications"],
  session: true,
  summary: "List connected applications",
  description:
    "The OAuth grants standing (AI assistants connected to the MCP server), newest first: the signed-in member's " +
    "own, or the whole account's for an owner or an admin.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(oauthGrantSchema), "A page of grants.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listGrants(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentOAuthGrant), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { listMembers } from "../../domain/members/members";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { memberSchema, presentMember } from "../../resources/member";

export const route = apiRoute({
  operationId: "listMembers",
  method: "get",
  path: "/members",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "List members",
  description: "The account's people, newest first: each one's role and the scopes it gives.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(memberSchema), "A page of members.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listMembers(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentMember), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { listInvitations } from "../../domain/members/invitations";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { invitationSchema, presentInvitation } from "../../resources/member";

export const route = apiRoute({
  operationId: "listInvitations",
  method: "get",
  path: "/invitations",
  tags: ["Members"],
  mcpTool: false,
  liveOnly: true,
  summary: "List invitations",
  description: "The account's invitations, newest first, with their status (pending, accepted, revoked, expired).",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(invitationSchema), "A page of invitations.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listInvitations(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentInvitation), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { listSessions } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSession, sessionSchema } from "../../resources/member";

export const route = apiRoute({
  operationId: "listMemberSessions",
  method: "get",
  path: "/auth/sessions",
  tags: ["Sign-in"],
  session: true,
  summary: "List my sessions",
  description: "The signed-in member's open sessions, newest first; `current` marks this one.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(sessionSchema), "A page of sessions.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const principal = c.get("principal");
  const rows = await listSessions(c.get("ctx"), principal, query);
  const current = principal.member?.sessionId ?? null;
  return c.json(
    toPage(c, rows, query.limit, (row) => presentSession(row, current)),
    200,
  );
};

import type { RouteHandler } from "@hono/zod-openapi";
import { revokeSession } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { clearSessionCookie } from "../../middleware/session-cookie";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { sessionIdParam } from "../../resources/member";

export const route = apiRoute({
  operationId: "revokeMemberSession",
  method: "delete",
  path: "/auth/sessions/{id}",
  tags: ["Sign-in"],
  session: true,
  summary: "End one of my sessions",
  description: "That browser answers 401 from its next request. Ending this one signs out (its cookie is cleared).",
  request: { params: sessionIdParam },
  errors: ["not_found"],
  responses: { 200: jsonContent(deletedSchema, "Ended.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await revokeSession(c.get("ctx"), c.get("principal"), id);
  if (id === c.get("principal").member?.sessionId) clearSessionCookie(c);
  return c.json({ id, deleted: true as const }, 200);
};

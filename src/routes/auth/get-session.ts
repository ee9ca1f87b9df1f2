import { type RouteHandler, z } from "@hono/zod-openapi";
import { findMember } from "../../domain/members/members";
import { callerSession, csrfTokenFor } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { sessionCookieToken } from "../../middleware/session-cookie";
import { id } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { csrfTokenSchema, memberSchema, presentMember } from "../../resources/member";

const current = z
  .object({ session_id: id("memberSession"), member: memberSchema, csrf_token: csrfTokenSchema })
  .openapi("CurrentSession");

export const route = apiRoute({
  operationId: "getCurrentSession",
  method: "get",
  path: "/auth/session",
  tags: ["Sign-in"],
  session: true,
  summary: "Get the signed-in member",
  description:
    "Who is signed in, with their role's scopes, and the session's CSRF token again (a page reloaded keeps its " +
    "cookie, not the token).",
  secret: true,
  responses: { 200: jsonContent(current, "The signed-in member.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  const { memberId, sessionId } = callerSession(principal);
  const member = await findMember(ctx, principal, memberId);
  const csrf = await csrfTokenFor(c.env, sessionCookieToken(c) ?? "");
  return c.json({ session_id: sessionId, member: presentMember(member), csrf_token: csrf }, 200);
};

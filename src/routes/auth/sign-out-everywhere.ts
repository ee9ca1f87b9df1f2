import { type RouteHandler, z } from "@hono/zod-openapi";
import { revokeMemberSessions } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { clearSessionCookie } from "../../middleware/session-cookie";
import { integer } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";

export const route = apiRoute({
  operationId: "signOutEverywhere",
  method: "post",
  path: "/auth/sign-out-everywhere",
  tags: ["Sign-in"],
  session: true,
  summary: "Sign out everywhere",
  description:
    "Ends every session of the signed-in member, this one included (its cookie is cleared): other browsers answer " +
    "401 from their next request. Recorded in the audit log.",
  responses: {
    200: jsonContent(
      z.object({ sessions_ended: integer(0, 1_000_000).openapi({ description: "How many sessions ended." }) }),
      "Signed out everywhere.",
    ),
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  const member = principal.member as NonNullable<typeof principal.member>;
  const ended = await revokeMemberSessions(ctx, { id: member.id, accountId: principal.accountId }, null);
  clearSessionCookie(c);
  return c.json({ sessions_ended: ended }, 200);
};

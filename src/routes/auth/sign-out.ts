import { type RouteHandler, z } from "@hono/zod-openapi";
import { signOut } from "../../domain/members/sessions";
import type { AppEnv } from "../../env";
import { clearSessionCookie } from "../../middleware/session-cookie";
import { apiRoute, jsonContent } from "../../platform/route-definitions";

export const route = apiRoute({
  operationId: "signOut",
  method: "post",
  path: "/auth/sign-out",
  tags: ["Sign-in"],
  session: true,
  summary: "Sign out",
  description: "Ends this session and clears its cookie.",
  responses: { 200: jsonContent(z.object({ signed_out: z.literal(true) }), "Signed out.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await signOut(c.get("ctx"), c.get("principal"));
  clearSessionCookie(c);
  return c.json({ signed_out: true as const }, 200);
};

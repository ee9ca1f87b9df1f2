import type { RouteHandler } from "@hono/zod-openapi";
import { disableMemberMfa } from "../../domain/members/member-mfa";
import { findMember } from "../../domain/members/members";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { memberSchema, presentMember } from "../../resources/member";

export const route = apiRoute({
  operationId: "disableMemberMfa",
  method: "delete",
  path: "/auth/mfa",
  tags: ["Sign-in"],
  session: true,
  summary: "Disable my MFA",
  description: "Turns the member's MFA off and deletes its recovery codes. Needs `X-MFA-Code`.",
  mfa: true,
  responses: { 200: jsonContent(memberSchema, "The member, MFA disabled.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  await disableMemberMfa(ctx, principal, mfaCode(c));
  return c.json(presentMember(await findMember(ctx, principal, principal.member?.id ?? "")), 200);
};

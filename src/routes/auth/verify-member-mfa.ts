import type { RouteHandler } from "@hono/zod-openapi";
import { verifyMemberEnrollment } from "../../domain/members/member-mfa";
import { findMember } from "../../domain/members/members";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { memberSchema, presentMember } from "../../resources/member";
import { mfaVerificationSchema } from "../../resources/mfa";

export const route = apiRoute({
  operationId: "verifyMemberMfa",
  method: "post",
  path: "/auth/mfa/verify",
  tags: ["Sign-in"],
  session: true,
  summary: "Confirm my MFA enrollment",
  description: "Turns the member's MFA on with the first code. A wrong code answers 403 `mfa_required`.",
  request: { body: jsonBody(mfaVerificationSchema) },
  errors: ["mfa_required"],
  responses: { 200: jsonContent(memberSchema, "The member, MFA enabled.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  await verifyMemberEnrollment(ctx, principal, c.req.valid("json").code);
  return c.json(presentMember(await findMember(ctx, principal, principal.member?.id ?? "")), 200);
};

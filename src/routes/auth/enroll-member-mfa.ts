import type { RouteHandler } from "@hono/zod-openapi";
import { enrollMemberTotp } from "../../domain/members/member-mfa";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { mfaEnrollmentRequestSchema, mfaEnrollmentSchema, presentEnrollment } from "../../resources/mfa";

export const route = apiRoute({
  operationId: "enrollMemberMfa",
  method: "post",
  path: "/auth/mfa",
  tags: ["Sign-in"],
  session: true,
  summary: "Enroll my TOTP MFA",
  description:
    "The signed-in member's own second factor, as the account's: a new TOTP secret and 10 recovery codes, shown " +
    "once; on from the first code sent to `POST /auth/mfa/verify`. Then asked at sign-in and, as `X-MFA-Code`, " +
    "for the actions the API gates. Re-enrolling with MFA on needs `X-MFA-Code`.",
  request: { body: jsonBody(mfaEnrollmentRequestSchema) },
  mfa: true,
  secret: true,
  responses: { 201: jsonContent(mfaEnrollmentSchema, "The pending enrollment.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const result = await enrollMemberTotp(c.get("ctx"), c.get("principal"), mfaCode(c));
  return c.json(presentEnrollment(result), 201);
};

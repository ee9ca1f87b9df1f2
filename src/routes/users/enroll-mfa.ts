import type { RouteHandler } from "@hono/zod-openapi";
import { currentAccount } from "../../domain/accounts/accounts";
import { enrollTotp } from "../../domain/accounts/mfa";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { mfaEnrollmentRequestSchema, mfaEnrollmentSchema, presentEnrollment } from "../../resources/mfa";

export const route = apiRoute({
  operationId: "enrollMfa",
  method: "post",
  path: "/users/me/security/mfa",
  tags: ["Account"],
  summary: "Enroll TOTP MFA",
  description:
    "Returns a new TOTP secret and 10 recovery codes, shown once. MFA becomes enabled when the first code is sent to " +
    "`POST /users/me/security/mfa/verify`. Re-enrolling while MFA is enabled needs `X-MFA-Code`.",
  request: { body: jsonBody(mfaEnrollmentRequestSchema) },
  mfa: true,
  secret: true,
  responses: { 201: jsonContent(mfaEnrollmentSchema, "The pending enrollment.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  const result = await enrollTotp(ctx, await currentAccount(ctx, principal), mfaCode(c));
  return c.json(presentEnrollment(result), 201);
};

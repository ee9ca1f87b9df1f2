import type { RouteHandler } from "@hono/zod-openapi";
import { currentAccount, findAccount } from "../../domain/accounts/accounts";
import { verifyEnrollment } from "../../domain/accounts/mfa";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { presentSecurity, securitySchema } from "../../resources/account";
import { mfaVerificationSchema } from "../../resources/mfa";

export const route = apiRoute({
  operationId: "verifyMfa",
  method: "post",
  path: "/users/me/security/mfa/verify",
  tags: ["Account"],
  summary: "Confirm MFA enrollment",
  description: "Enables MFA with the first code from the authenticator. A wrong code answers 403 `mfa_required`.",
  request: { body: jsonBody(mfaVerificationSchema) },
  errors: ["mfa_required"],
  responses: { 200: jsonContent(securitySchema, "Security info, MFA enabled.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  const account = await currentAccount(ctx, principal);
  await verifyEnrollment(ctx, account, c.req.valid("json").code);
  return c.json(presentSecurity(await findAccount(ctx, account.id)), 200);
};

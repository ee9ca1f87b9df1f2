import { type RouteHandler, z } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import { verifyEnrollment } from "../../domain/accounts/mfa";
import { domainContext } from "../../domain/context";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { presentSecurity, securitySchema } from "../../schemas/account";

const body = z
  .strictObject({ code: z.string().regex(/^\d{6}$/, "must be a 6-digit code") })
  .openapi("MfaVerification", { example: { code: "123456" } });

export const route = apiRoute({
  method: "post",
  path: "/users/me/security/mfa/verify",
  tags: ["Account"],
  summary: "Confirm MFA enrollment",
  description: "Enables MFA with the first code from the authenticator. A wrong code answers 403 `mfa_required`.",
  request: { body: jsonBody(body) },
  errors: ["mfa_required"],
  responses: { 200: jsonContent(securitySchema, "Security info, MFA enabled.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const ctx = domainContext(c.env);
  const account = await currentAccount(c);
  await verifyEnrollment(ctx, account, c.req.valid("json").code);
  return c.json(presentSecurity(await findAccount(ctx.db, account.id)), 200);
};

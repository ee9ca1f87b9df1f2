import { type RouteHandler, z } from "@hono/zod-openapi";
import { database } from "../../db/client";
import { findAccount } from "../../domain/accounts/accounts";
import { verifyEnrollment } from "../../domain/accounts/mfa";
import type { AppEnv } from "../../env";
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
  const db = database(c.env.DB);
  const account = await findAccount(db, c.var.principal.accountId);
  await verifyEnrollment(db, c.env.SEALING_KEY, account, c.req.valid("json").code);
  return c.json(presentSecurity(await findAccount(db, account.id)), 200);
};

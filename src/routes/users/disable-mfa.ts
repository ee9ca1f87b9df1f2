import type { RouteHandler } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import { disableMfa } from "../../domain/accounts/mfa";
import { domainContext } from "../../domain/context";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { requireMfa } from "../../middleware/gates";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { presentSecurity, securitySchema } from "../../schemas/account";

export const route = apiRoute({
  method: "delete",
  path: "/users/me/security/mfa",
  tags: ["Account"],
  summary: "Disable MFA",
  description: "Turns MFA off and deletes the recovery codes. Needs `X-MFA-Code` (a TOTP or recovery code).",
  errors: ["mfa_required"],
  responses: { 200: jsonContent(securitySchema, "Security info, MFA disabled.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const ctx = domainContext(c.env);
  const account = await currentAccount(c);
  await requireMfa(c, account);
  await disableMfa(ctx, account.id);
  return c.json(presentSecurity(await findAccount(ctx.db, account.id)), 200);
};

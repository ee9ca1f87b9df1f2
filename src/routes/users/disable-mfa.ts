import type { RouteHandler } from "@hono/zod-openapi";
import { currentAccount, findAccount } from "../../domain/accounts/accounts";
import { disableMfa } from "../../domain/accounts/mfa";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { presentSecurity, securitySchema } from "../../resources/account";

export const route = apiRoute({
  operationId: "disableMfa",
  method: "delete",
  path: "/users/me/security/mfa",
  tags: ["Account"],
  summary: "Disable MFA",
  description: "Turns MFA off and deletes the recovery codes. Needs `X-MFA-Code` (a TOTP or recovery code).",
  mfa: true,
  responses: { 200: jsonContent(securitySchema, "Security info, MFA disabled.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { ctx, principal } = c.var;
  const account = await currentAccount(ctx, principal);
  await disableMfa(ctx, account, mfaCode(c));
  return c.json(presentSecurity(await findAccount(ctx, account.id)), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { database } from "../../db/client";
import { findAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { presentSecurity, securitySchema } from "../../schemas/account";

export const route = apiRoute({
  method: "get",
  path: "/users/me/security",
  tags: ["Account"],
  summary: "Get security info",
  description:
    "MFA state, and the time and source IP of the latest authenticated API call (updated at most once a minute).",
  responses: { 200: jsonContent(securitySchema, "Security info.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await findAccount(database(c.env.DB), c.var.principal.accountId);
  return c.json(presentSecurity(account), 200);
};

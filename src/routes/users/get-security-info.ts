import type { RouteHandler } from "@hono/zod-openapi";
import { currentAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSecurity, securitySchema } from "../../resources/account";

export const route = apiRoute({
  operationId: "getSecurityInfo",
  method: "get",
  path: "/users/me/security",
  tags: ["Account"],
  summary: "Get security info",
  description:
    "MFA state, and the time and source IP of the latest authenticated API call (updated at most once a minute).",
  responses: { 200: jsonContent(securitySchema, "Security info.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentSecurity(await currentAccount(c.get("ctx"), c.get("principal"))), 200);
};

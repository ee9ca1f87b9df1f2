import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
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
  const account = await currentAccount(c);
  return c.json(presentSecurity(account), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { accountSchema, presentAccount } from "../../schemas/account";

export const route = apiRoute({
  method: "get",
  path: "/users/me",
  tags: ["Account"],
  summary: "Get the account",
  description: "The account that owns the API key, with its prepaid balance.",
  responses: { 200: jsonContent(accountSchema, "The account.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  return c.json(presentAccount(account), 200);
};

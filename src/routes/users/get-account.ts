import type { RouteHandler } from "@hono/zod-openapi";
import { currentAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { accountSchema, presentAccount } from "../../resources/account";

export const route = apiRoute({
  operationId: "getAccount",
  method: "get",
  path: "/users/me",
  tags: ["Account"],
  summary: "Get the account",
  description: "The account that owns the API key, with its prepaid balance.",
  responses: { 200: jsonContent(accountSchema, "The account.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentAccount(await currentAccount(c.get("ctx"), c.get("principal"))), 200);
};

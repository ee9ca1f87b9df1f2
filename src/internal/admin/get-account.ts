import type { RouteHandler } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { adminAccountSchema, presentAdminAccount } from "../../resources/admin";
import { accountParams, tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminGetAccount",
    method: "get",
    path: "/accounts/{id}",
    tags,
    summary: "Get an account",
    description: "The account with its risk-review flag and limit overrides.",
    request: { params: accountParams },
    errors: ["invalid_request", "not_found"],
    responses: { 200: jsonContent(adminAccountSchema, "The account.") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentAdminAccount(await findAccount(c.get("ctx"), c.req.valid("param").id)), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { listAccounts } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { email } from "../../platform/fields";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { adminAccountSchema, presentAdminAccount } from "../../resources/admin";
import { tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminListAccounts",
    method: "get",
    path: "/accounts",
    tags,
    summary: "List accounts",
    description: "Newest first; `email` finds one account.",
    request: { query: paginationQuery.extend({ email: email().optional() }) },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(pageSchema(adminAccountSchema), "A page of accounts, newest first.") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  return c.json(toPage(c, await listAccounts(c.get("ctx"), query), query.limit, presentAdminAccount), 200);
};

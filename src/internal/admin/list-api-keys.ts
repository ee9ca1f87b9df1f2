import type { RouteHandler } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import { listApiKeys } from "../../domain/api-keys/api-keys";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { apiKeySchema, presentApiKey } from "../../resources/admin";
import { accountParams, tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminListApiKeys",
    method: "get",
    path: "/accounts/{id}/api-keys",
    tags,
    summary: "List an account's API keys",
    description: "Newest first, revoked ones included; never their tokens.",
    request: { params: accountParams, query: paginationQuery },
    errors: ["invalid_request", "not_found"],
    responses: { 200: jsonContent(pageSchema(apiKeySchema), "A page of keys, newest first (no tokens).") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await findAccount(c.var.ctx, c.req.valid("param").id);
  const query = c.req.valid("query");
  return c.json(toPage(c, await listApiKeys(c.var.ctx, account.id, query), query.limit, presentApiKey), 200);
};

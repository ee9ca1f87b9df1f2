import type { RouteHandler } from "@hono/zod-openapi";
import { findAccount } from "../../domain/accounts/accounts";
import { listApiKeys } from "../../domain/api-keys/api-keys";
import { sandboxTwinIdOf } from "../../domain/sandbox/twins";
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
    description: "Newest first, revoked ones included, the account's sandbox (`test`) keys too; never their tokens.",
    request: { params: accountParams, query: paginationQuery },
    errors: ["invalid_request", "not_found"],
    responses: { 200: jsonContent(pageSchema(apiKeySchema), "A page of keys, newest first (no tokens).") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await findAccount(c.get("ctx"), c.req.valid("param").id);
  const twin = await sandboxTwinIdOf(c.get("ctx"), account.id);
  const query = c.req.valid("query");
  const keys = await listApiKeys(c.get("ctx"), twin ? [account.id, twin] : [account.id], query);
  return c.json(toPage(c, keys, query.limit, presentApiKey), 200);
};

import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { findAccount } from "../../domain/accounts/accounts";
import { issueApiKey, listApiKeys, revokeApiKey } from "../../domain/api-keys/api-keys";
import type { AppEnv } from "../../env";
import { id, idParam, list, timestamp, token } from "../../platform/fields";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { apiKeySchema, presentApiKey, productScopeSchema } from "../../resources/admin";

const tags = ["Admin"];
const accountParams = z.object({ id: idParam("account").openapi({ param: { name: "id", in: "path" } }) });

const issueKeyRoute = internalRoute(
  {
    operationId: "adminIssueApiKey",
    method: "post",
    path: "/accounts/{id}/api-keys",
    tags,
    summary: "Issue an API key",
    description: "The token is returned once and stored only as a SHA-256 hash.",
    request: {
      params: accountParams,
      body: jsonBody(
        z
          .strictObject({
            products: productScopeSchema
              .nullable()
              .optional()
              .openapi({ description: "Omit or null for all products." }),
          })
          .openapi("AdminApiKeyCreate", { example: { products: ["residential"] } }),
      ),
    },
    secret: true,
    errors: ["not_found"],
    responses: {
      201: jsonContent(
        z
          .object({
            id: id("apiKey"),
            token: token(/^live_[0-9A-Za-z]{64}$/, 69).openapi({ description: "Shown once." }),
            products: list(z.enum(products), products.length).nullable(),
            created_at: timestamp(),
          })
          .openapi("IssuedApiKey"),
        "The new key with its token.",
      ),
    },
  },
  "AdminToken",
);

const listKeysRoute = internalRoute(
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

const revokeKeyRoute = internalRoute(
  {
    operationId: "adminRevokeApiKey",
    method: "delete",
    path: "/api-keys/{id}",
    tags,
    summary: "Revoke an API key",
    description: "Takes effect on the key's next call, everywhere. Revoking twice is harmless.",
    request: { params: z.object({ id: idParam("apiKey").openapi({ param: { name: "id", in: "path" } }) }) },
    errors: ["not_found"],
    responses: {
      200: jsonContent(z.object({ id: id("apiKey"), revoked: z.literal(true) }).openapi("RevokedApiKey"), "Revoked."),
    },
  },
  "AdminToken",
);

export function adminApiKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(issueKeyRoute, async (c) => {
    const account = await findAccount(c.var.ctx, c.req.valid("param").id);
    const { key, token } = await issueApiKey(c.var.ctx, account.id, c.req.valid("json").products ?? null);
    return c.json({ id: key.id, token, products: key.products, created_at: presentApiKey(key).created_at }, 201);
  });

  app.openapi(listKeysRoute, async (c) => {
    const account = await findAccount(c.var.ctx, c.req.valid("param").id);
    const query = c.req.valid("query");
    return c.json(toPage(c, await listApiKeys(c.var.ctx, account.id, query), query.limit, presentApiKey), 200);
  });

  app.openapi(revokeKeyRoute, async (c) => {
    const { id } = c.req.valid("param");
    await revokeApiKey(c.var.ctx, id);
    return c.json({ id, revoked: true as const }, 200);
  });
}

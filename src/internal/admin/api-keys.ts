import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { database } from "../../db/client";
import { apiKeys, products } from "../../db/schema";
import { findAccount } from "../../domain/accounts/accounts";
import { issueApiKey, revokeApiKey } from "../../domain/api-keys/api-keys";
import type { AppEnv } from "../../env";
import { internalRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { keysetPage, pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiKeySchema, presentApiKey, productScopeSchema } from "../../schemas/admin";

const tags = ["Internal: admin"];

const issueKeyRoute = internalRoute(
  {
    method: "post",
    path: "/accounts/{id}/api-keys",
    tags,
    summary: "Issue an API key",
    description: "The token is returned once and stored only as a SHA-256 hash.",
    request: {
      params: z.object({ id: z.string() }),
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
    errors: ["invalid_request", "not_found"],
    responses: {
      201: jsonContent(
        z
          .object({
            id: z.string(),
            token: z.string().openapi({ description: "Shown once.", example: "live_3kTq…" }),
            products: z.array(z.enum(products)).nullable(),
            created_at: z.iso.datetime(),
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
    method: "get",
    path: "/accounts/{id}/api-keys",
    tags,
    summary: "List an account's API keys",
    request: { params: z.object({ id: z.string() }), query: paginationQuery },
    errors: ["invalid_request", "not_found"],
    responses: { 200: jsonContent(pageSchema(apiKeySchema), "A page of keys, newest first (no tokens).") },
  },
  "AdminToken",
);

const revokeKeyRoute = internalRoute(
  {
    method: "delete",
    path: "/api-keys/{id}",
    tags,
    summary: "Revoke an API key",
    description: "Takes effect on the key's next call, everywhere. Revoking twice is harmless.",
    request: { params: z.object({ id: z.string() }) },
    errors: ["not_found"],
    responses: {
      200: jsonContent(z.object({ id: z.string(), revoked: z.literal(true) }).openapi("RevokedApiKey"), "Revoked."),
    },
  },
  "AdminToken",
);

export function adminApiKeyRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(issueKeyRoute, async (c) => {
    const db = database(c.env.DB);
    const account = await findAccount(db, c.req.valid("param").id);
    const key = await issueApiKey(db, c.env, account.id, c.req.valid("json").products ?? null);
    return c.json(key, 201);
  });

  app.openapi(listKeysRoute, async (c) => {
    const db = database(c.env.DB);
    const account = await findAccount(db, c.req.valid("param").id);
    const query = c.req.valid("query");
    const page = keysetPage(apiKeys.id, query);
    const rows = await db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.accountId, account.id), page.where))
      .orderBy(page.orderBy)
      .limit(page.limit);
    return c.json(toPage(c, rows, query.limit, presentApiKey), 200);
  });

  app.openapi(revokeKeyRoute, async (c) => {
    const { id } = c.req.valid("param");
    await revokeApiKey(database(c.env.DB), c.env, id);
    return c.json({ id, revoked: true as const }, 200);
  });
}

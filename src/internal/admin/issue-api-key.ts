import { type RouteHandler, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { findAccount } from "../../domain/accounts/accounts";
import { issueApiKey } from "../../domain/api-keys/api-keys";
import type { AppEnv } from "../../env";
import { toIso } from "../../platform/clock";
import { id, list, timestamp, token } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { productScopeSchema } from "../../resources/admin";
import { accountParams, tags } from "./shared";

export const route = internalRoute(
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

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await findAccount(c.var.ctx, c.req.valid("param").id);
  const { key, token } = await issueApiKey(c.var.ctx, account.id, c.req.valid("json").products ?? null);
  return c.json({ id: key.id, token, products: key.products, created_at: toIso(key.createdAt) }, 201);
};

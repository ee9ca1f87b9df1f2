import { type RouteHandler, z } from "@hono/zod-openapi";
import { products } from "../../db/schema";
import { API_KEY_PATTERN, issueApiKey, keyModes } from "../../domain/api-keys/api-keys";
import { findLiveAccount, sandboxTwinOf } from "../../domain/sandbox/twins";
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
    description:
      "The token is returned once and stored only as a SHA-256 hash. `mode: test` issues a `test_` key acting on " +
      "the account's sandbox twin (created with its first test key: the live plan, a simulated opening balance " +
      "of $1,000); `account_id` is the account the key acts on. The id of a sandbox twin is refused.",
    request: {
      params: accountParams,
      body: jsonBody(
        z
          .strictObject({
            products: productScopeSchema
              .nullable()
              .optional()
              .openapi({ description: "Omit or null for all products." }),
            mode: z
              .enum(keyModes)
              .default("live")
              .openapi({ description: "`live` (default) or `test`: a sandbox key (`test_…`)." }),
          })
          .openapi("AdminApiKeyCreate", { example: { products: ["residential"] } }),
      ),
    },
    secret: true,
    errors: ["not_found", "invalid_request"],
    responses: {
      201: jsonContent(
        z
          .object({
            id: id("apiKey"),
            token: token(API_KEY_PATTERN, 69).openapi({ description: "Shown once." }),
            mode: z.enum(keyModes),
            account_id: id("account").openapi({
              description: "The account the key acts on: the sandbox twin for test.",
            }),
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
  const { products, mode } = c.req.valid("json");
  const live = await findLiveAccount(c.get("ctx"), c.req.valid("param").id);
  const account = mode === "test" ? await sandboxTwinOf(c.get("ctx"), live) : live;
  const { key, token } = await issueApiKey(
    c.get("ctx"),
    account.id,
    { products: products ?? null, scopes: null, subuserIds: null, expiresAt: null },
    mode,
  );
  return c.json(
    { id: key.id, token, mode, account_id: account.id, products: key.products, created_at: toIso(key.createdAt) },
    201,
  );
};

import type { RouteHandler } from "@hono/zod-openapi";
import { createKey } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import {
  apiKeyChangesSchema,
  apiKeyWithTokenSchema,
  keyChanges,
  presentApiKeyWithToken,
} from "../../resources/api-key";

export const route = apiRoute({
  operationId: "createApiKey",
  method: "post",
  path: "/api-keys",
  tags: ["API keys"],
  boundKeys: true,
  summary: "Create an API key",
  description:
    "A live key makes live keys, a sandbox key sandbox keys. The new key never grants more than the calling key: " +
    "products, per-area access, expiry and sub-users within its own (else 403 `insufficient_scope`). A key made " +
    "with `subuser_ids` is bound to those sub-users. The token is shown once. " +
    "At most 50 active keys per account.",
  request: { body: jsonBody(apiKeyChangesSchema) },
  mfa: true,
  secret: true,
  errors: ["api_key_limit", "subuser_not_found"],
  responses: { 201: jsonContent(apiKeyWithTokenSchema, "The key, with its token (shown once).") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const changes = keyChanges(c.req.valid("json"));
  const { key, token } = await createKey(c.get("ctx"), c.get("principal"), changes, mfaCode(c));
  return c.json(presentApiKeyWithToken(key, token), 201);
};

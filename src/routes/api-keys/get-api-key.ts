import type { RouteHandler } from "@hono/zod-openapi";
import { findKey } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { apiKeyIdParam, apiKeySchema, presentApiKey } from "../../resources/api-key";

export const route = apiRoute({
  operationId: "getApiKey",
  method: "get",
  path: "/api-keys/{id}",
  tags: ["API keys"],
  boundKeys: true,
  summary: "Get an API key",
  description: "Its scopes, expiry and last use; never its token.",
  request: { params: apiKeyIdParam },
  errors: ["api_key_not_found"],
  responses: { 200: jsonContent(apiKeySchema, "The API key.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const key = await findKey(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentApiKey(key), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { updateKey } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { apiKeyChangesSchema, apiKeyIdParam, apiKeySchema, keyChanges, presentApiKey } from "../../resources/api-key";

export const route = apiRoute({
  operationId: "updateApiKey",
  method: "patch",
  path: "/api-keys/{id}",
  tags: ["API keys"],
  boundKeys: true,
  summary: "Update an API key",
  description:
    "Name, products, scopes, sub-users (`subuser_ids`) or expiry, within the calling key's own grant; in force for " +
    "the next call with the key (a live tail it opened that shows a sub-user it no longer reaches closes at once).",
  request: { params: apiKeyIdParam, body: jsonBody(apiKeyChangesSchema) },
  mfa: true,
  errors: ["api_key_not_found", "subuser_not_found"],
  responses: { 200: jsonContent(apiKeySchema, "The API key.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const changes = keyChanges(c.req.valid("json"));
  const key = await updateKey(c.get("ctx"), c.get("principal"), c.req.valid("param").id, changes, mfaCode(c));
  return c.json(presentApiKey(key), 200);
};

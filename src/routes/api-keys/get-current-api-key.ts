import type { RouteHandler } from "@hono/zod-openapi";
import { findKey } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { ApiError } from "../../platform/errors";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { apiKeySchema, presentApiKey } from "../../resources/api-key";

export const route = apiRoute({
  operationId: "getCurrentApiKey",
  method: "get",
  path: "/api-keys/current",
  tags: ["API keys"],
  scope: "any key",
  summary: "Get the calling API key",
  description:
    "The key this request is signed with: its scopes, product scope and expiry, so a client can show only what the " +
    "key may do. Open to every key, whatever its scopes; never its token. A signed-in member (no key) gets 404 " +
    "`api_key_not_found`: `GET /auth/session` describes it.",
  errors: ["api_key_not_found"],
  responses: { 200: jsonContent(apiKeySchema, "The calling API key.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const principal = c.get("principal");
  if (principal.keyId === null) throw new ApiError("api_key_not_found", "This call was not made with an API key.");
  return c.json(presentApiKey(await findKey(c.get("ctx"), principal, principal.keyId)), 200);
};

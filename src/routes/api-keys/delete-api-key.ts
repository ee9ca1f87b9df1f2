import type { RouteHandler } from "@hono/zod-openapi";
import { deleteKey } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { apiKeyIdParam } from "../../resources/api-key";
import { deletedSchema } from "../../resources/common";

export const route = apiRoute({
  operationId: "deleteApiKey",
  method: "delete",
  path: "/api-keys/{id}",
  tags: ["API keys"],
  boundKeys: true,
  summary: "Revoke an API key",
  description: "Irreversible: every call with the key (the calling one included) answers 401 from the next call on.",
  request: { params: apiKeyIdParam },
  mfa: true,
  errors: ["api_key_not_found"],
  responses: { 200: jsonContent(deletedSchema, "Revoked.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await deleteKey(c.get("ctx"), c.get("principal"), id, mfaCode(c));
  return c.json({ id, deleted: true as const }, 200);
};

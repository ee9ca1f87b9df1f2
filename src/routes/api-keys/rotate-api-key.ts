import { type RouteHandler, z } from "@hono/zod-openapi";
import { rotateKey, rotationGraceMs } from "../../domain/api-keys/management";
import type { AppEnv } from "../../env";
import { integer } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { apiKeyIdParam, apiKeyWithTokenSchema, presentApiKeyWithToken } from "../../resources/api-key";

const body = z
  .strictObject({
    grace_seconds: integer(0, 604_800).optional().openapi({
      description: "How long the replaced token keeps working: 0 (never) to 7 days. Default 86,400 (24 h).",
    }),
  })
  .openapi("ApiKeyRotate", { example: { grace_seconds: 3600 } });

export const route = apiRoute({
  operationId: "rotateApiKey",
  method: "post",
  path: "/api-keys/{id}/rotate",
  tags: ["API keys"],
  boundKeys: true,
  summary: "Rotate an API key's token",
  description:
    "A new token, shown once; the replaced one keeps working for `grace_seconds` (24 hours by default) so " +
    "deployments can move over, then answers 401. A second rotation ends the first one's grace at once.",
  request: { params: apiKeyIdParam, body: jsonBody(body) },
  mfa: true,
  secret: true,
  errors: ["api_key_not_found"],
  responses: { 200: jsonContent(apiKeyWithTokenSchema, "The key, with its new token (shown once).") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const grace = rotationGraceMs(c.req.valid("json").grace_seconds);
  const { key, token } = await rotateKey(c.get("ctx"), c.get("principal"), c.req.valid("param").id, grace, mfaCode(c));
  return c.json(presentApiKeyWithToken(key, token), 200);
};

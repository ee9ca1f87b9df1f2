import type { RouteHandler } from "@hono/zod-openapi";
import { rotateSecret } from "../../domain/webhooks/endpoints";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentEndpoint, webhookEndpointIdParam, webhookEndpointWithSecretSchema } from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

export const route = apiRoute({
  operationId: "rotateWebhookEndpointSecret",
  method: "post",
  path: "/webhook-endpoints/{id}/rotate-secret",
  tags: [TAG],
  summary: "Rotate a webhook endpoint's signing secret",
  description:
    "Returns a new secret once. For 24 hours (`previous_secret_expires_at`) every delivery carries two " +
    "signatures, one per secret, so the receiver can switch without missing one; a further rotation ends the " +
    "overlap of the oldest secret at once.",
  request: { params: webhookEndpointIdParam },
  secret: true,
  errors: ENDPOINT_ERRORS,
  responses: { 200: jsonContent(webhookEndpointWithSecretSchema, "The endpoint with its new secret.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { endpoint, secret } = await rotateSecret(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json({ ...presentEndpoint(endpoint), secret }, 200);
};

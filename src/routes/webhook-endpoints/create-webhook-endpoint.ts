import { type RouteHandler, z } from "@hono/zod-openapi";
import { createEndpoint } from "../../domain/webhooks/endpoints";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  descriptionSchema,
  presentEndpoint,
  subscribedEventsSchema,
  webhookEndpointWithSecretSchema,
  webhookUrlSchema,
} from "../../resources/webhook";
import { TAG, WEBHOOK_ERRORS } from "./shared";

const body = z
  .strictObject({ url: webhookUrlSchema, events: subscribedEventsSchema, description: descriptionSchema.optional() })
  .openapi("WebhookEndpointCreate", {
    example: { url: "https://hooks.example.com/proxy-events", events: ["order.completed"], description: "Billing" },
  });

export const route = apiRoute({
  operationId: "createWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints",
  tags: [TAG],
  summary: "Create a webhook endpoint",
  description:
    "Every event of the account whose type the endpoint subscribes to is POSTed to `url`, signed per Standard " +
    "Webhooks with the `secret` returned here (shown only once). At most 16 endpoints per account. Webhooks are " +
    "available on every plan but `trial`, to keys without a product scope.",
  request: { body: jsonBody(body) },
  secret: true,
  errors: [...WEBHOOK_ERRORS, "webhook_url_not_allowed", "webhook_endpoint_limit"],
  responses: { 201: jsonContent(webhookEndpointWithSecretSchema, "The new endpoint with its signing secret.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const { endpoint, secret } = await createEndpoint(c.get("ctx"), c.get("principal"), input);
  return c.json({ ...presentEndpoint(endpoint), secret }, 201);
};

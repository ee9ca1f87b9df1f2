import type { RouteHandler } from "@hono/zod-openapi";
import { sendTestEvent } from "../../domain/webhooks/deliveries";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentDelivery, webhookDeliverySchema, webhookEndpointIdParam } from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

export const route = apiRoute({
  operationId: "testWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints/{id}/test",
  tags: [TAG],
  summary: "Send a test event",
  description:
    "Sends a signed `webhook.test` event to the endpoint now (enabled or disabled) and returns the delivery with " +
    "the attempt in `last_attempt`: status code, duration, error. A failed attempt is still a 200 answer here; it " +
    "is not retried automatically. A 410 answer disables the endpoint.",
  request: { params: webhookEndpointIdParam },
  errors: ENDPOINT_ERRORS,
  responses: { 200: jsonContent(webhookDeliverySchema, "The test delivery and its attempt.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const delivery = await sendTestEvent(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentDelivery(delivery), 200);
};

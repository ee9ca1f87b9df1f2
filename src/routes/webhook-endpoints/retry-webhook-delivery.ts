import type { RouteHandler } from "@hono/zod-openapi";
import { retryDelivery } from "../../domain/webhooks/deliveries";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deliveryIdParams, presentDelivery, webhookDeliverySchema } from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

export const route = apiRoute({
  operationId: "retryWebhookDelivery",
  method: "post",
  path: "/webhook-endpoints/{id}/deliveries/{delivery_id}/retry",
  tags: [TAG],
  summary: "Retry a delivery now",
  description:
    "Sends the delivery's event again now (same `webhook-id`) and returns the delivery with the new attempt. A " +
    "2xx cancels any scheduled retry; a failure leaves the schedule as it was. 409 while an attempt is in flight.",
  request: { params: deliveryIdParams },
  errors: [...ENDPOINT_ERRORS, "webhook_delivery_not_found", "delivery_in_progress"],
  responses: { 200: jsonContent(webhookDeliverySchema, "The delivery with its new attempt.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id, delivery_id } = c.req.valid("param");
  const delivery = await retryDelivery(c.get("ctx"), c.get("principal"), id, delivery_id);
  return c.json(presentDelivery(delivery), 200);
};

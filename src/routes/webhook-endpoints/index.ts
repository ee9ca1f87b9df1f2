import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createWebhookEndpoint from "./create-webhook-endpoint";
import * as deleteWebhookEndpoint from "./delete-webhook-endpoint";
import * as getWebhookEndpoint from "./get-webhook-endpoint";
import * as listWebhookDeliveries from "./list-webhook-deliveries";
import * as listWebhookEndpoints from "./list-webhook-endpoints";
import * as retryWebhookDelivery from "./retry-webhook-delivery";
import * as rotateWebhookEndpointSecret from "./rotate-webhook-endpoint-secret";
import * as testWebhookEndpoint from "./test-webhook-endpoint";
import * as updateWebhookEndpoint from "./update-webhook-endpoint";

export function webhookEndpointRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listWebhookEndpoints.route, listWebhookEndpoints.handler);
  app.openapi(createWebhookEndpoint.route, createWebhookEndpoint.handler);
  app.openapi(getWebhookEndpoint.route, getWebhookEndpoint.handler);
  app.openapi(updateWebhookEndpoint.route, updateWebhookEndpoint.handler);
  app.openapi(deleteWebhookEndpoint.route, deleteWebhookEndpoint.handler);
  app.openapi(rotateWebhookEndpointSecret.route, rotateWebhookEndpointSecret.handler);
  app.openapi(testWebhookEndpoint.route, testWebhookEndpoint.handler);
  app.openapi(listWebhookDeliveries.route, listWebhookDeliveries.handler);
  app.openapi(retryWebhookDelivery.route, retryWebhookDelivery.handler);
}

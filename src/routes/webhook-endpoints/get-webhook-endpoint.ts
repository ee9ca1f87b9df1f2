import type { RouteHandler } from "@hono/zod-openapi";
import { findEndpoint } from "../../domain/webhooks/endpoints";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentEndpoint, webhookEndpointIdParam, webhookEndpointSchema } from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

export const route = apiRoute({
  operationId: "getWebhookEndpoint",
  method: "get",
  path: "/webhook-endpoints/{id}",
  tags: [TAG],
  summary: "Get a webhook endpoint",
  description: "The endpoint's settings and status; never its secret.",
  request: { params: webhookEndpointIdParam },
  errors: ENDPOINT_ERRORS,
  responses: { 200: jsonContent(webhookEndpointSchema, "The webhook endpoint.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const endpoint = await findEndpoint(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentEndpoint(endpoint), 200);
};

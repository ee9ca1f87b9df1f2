import { type RouteHandler, z } from "@hono/zod-openapi";
import { webhookEndpointStatuses } from "../../db/schema";
import { updateEndpoint } from "../../domain/webhooks/endpoints";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  descriptionSchema,
  presentEndpoint,
  subscribedEventsSchema,
  webhookEndpointIdParam,
  webhookEndpointSchema,
  webhookUrlSchema,
} from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

const body = z
  .strictObject({
    url: webhookUrlSchema.optional(),
    events: subscribedEventsSchema.optional(),
    description: descriptionSchema.optional(),
    status: z.enum(webhookEndpointStatuses).optional(),
  })
  .openapi("WebhookEndpointUpdate", { example: { status: "enabled" } });

export const route = apiRoute({
  operationId: "updateWebhookEndpoint",
  method: "patch",
  path: "/webhook-endpoints/{id}",
  tags: [TAG],
  summary: "Update a webhook endpoint",
  description:
    "Change `url`, `events`, `description` or `status`. `disabled` stops deliveries (pending ones fail unsent); " +
    "`enabled` resumes them for new events — events of the disabled period are in `GET /events`.",
  request: { params: webhookEndpointIdParam, body: jsonBody(body) },
  errors: [...ENDPOINT_ERRORS, "webhook_url_not_allowed"],
  responses: { 200: jsonContent(webhookEndpointSchema, "The updated webhook endpoint.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const endpoint = await updateEndpoint(c.get("ctx"), c.get("principal"), c.req.valid("param").id, c.req.valid("json"));
  return c.json(presentEndpoint(endpoint), 200);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { webhookDeliveryStatuses } from "../../db/schema";
import { listDeliveries } from "../../domain/webhooks/deliveries";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentDelivery, webhookDeliverySchema, webhookEndpointIdParam } from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

const query = paginationQuery.extend({ status: z.enum(webhookDeliveryStatuses).optional() });

export const route = apiRoute({
  operationId: "listWebhookDeliveries",
  method: "get",
  path: "/webhook-endpoints/{id}/deliveries",
  tags: [TAG],
  summary: "List an endpoint's deliveries",
  description:
    "The delivery log, newest first: one delivery per event sent to the endpoint, with its attempts (status " +
    "code, duration, error) and the next automatic retry. A failing delivery is retried 5 minutes, 2 hours and " +
    "24 hours after its first attempt (later if the endpoint answers with `Retry-After`); when the last retry " +
    "fails the endpoint is disabled and the account's notification email is told.",
  request: { params: webhookEndpointIdParam, query },
  paginated: true,
  errors: ENDPOINT_ERRORS,
  responses: { 200: jsonContent(pageSchema(webhookDeliverySchema), "A page of deliveries.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const filters = c.req.valid("query");
  const rows = await listDeliveries(c.get("ctx"), c.get("principal"), c.req.valid("param").id, filters);
  return c.json(toPage(c, rows, filters.limit, presentDelivery), 200);
};

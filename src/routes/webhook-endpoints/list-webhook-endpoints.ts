import type { RouteHandler } from "@hono/zod-openapi";
import { listEndpoints } from "../../domain/webhooks/endpoints";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentEndpoint, webhookEndpointSchema } from "../../resources/webhook";
import { TAG, WEBHOOK_ERRORS } from "./shared";

export const route = apiRoute({
  operationId: "listWebhookEndpoints",
  method: "get",
  path: "/webhook-endpoints",
  tags: [TAG],
  summary: "List webhook endpoints",
  description: "Newest first; never their secrets.",
  request: { query: paginationQuery },
  paginated: true,
  errors: [...WEBHOOK_ERRORS, "invalid_request"],
  responses: { 200: jsonContent(pageSchema(webhookEndpointSchema), "A page of webhook endpoints.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listEndpoints(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentEndpoint), 200);
};

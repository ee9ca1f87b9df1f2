import type { RouteHandler } from "@hono/zod-openapi";
import { deleteEndpoint } from "../../domain/webhooks/endpoints";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { webhookEndpointIdParam } from "../../resources/webhook";
import { ENDPOINT_ERRORS, TAG } from "./shared";

export const route = apiRoute({
  operationId: "deleteWebhookEndpoint",
  method: "delete",
  path: "/webhook-endpoints/{id}",
  tags: [TAG],
  summary: "Delete a webhook endpoint",
  description: "Irreversible: the endpoint and its delivery log are deleted; nothing more is sent to it.",
  request: { params: webhookEndpointIdParam },
  errors: ENDPOINT_ERRORS,
  responses: { 200: jsonContent(deletedSchema, "Deleted.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { id } = c.req.valid("param");
  await deleteEndpoint(c.get("ctx"), c.get("principal"), id);
  return c.json({ id, deleted: true as const }, 200);
};

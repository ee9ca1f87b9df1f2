import type { RouteHandler } from "@hono/zod-openapi";
import { findEvent } from "../../domain/webhooks/event-log";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { eventIdParam, eventSchema, presentEvent } from "../../resources/webhook";

export const route = apiRoute({
  operationId: "getEvent",
  method: "get",
  path: "/events/{id}",
  tags: ["Events"],
  summary: "Get an event",
  description: "One event of the last 30 days; older ones answer 404.",
  request: { params: eventIdParam },
  errors: ["invalid_request", "subuser_scope_mismatch", "event_not_found"],
  responses: { 200: jsonContent(eventSchema, "The event.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const event = await findEvent(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentEvent(event, c.get("livemode")), 200);
};

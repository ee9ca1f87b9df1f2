import type { RouteHandler } from "@hono/zod-openapi";
import { listEvents } from "../../domain/webhooks/event-log";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { eventSchema, eventTypeSchema, presentEvent } from "../../resources/webhook";

const query = paginationQuery.extend({ type: eventTypeSchema.optional() });

export const route = apiRoute({
  operationId: "listEvents",
  method: "get",
  path: "/events",
  tags: ["Events"],
  summary: "List events",
  description:
    "The account's events of the last 30 days, newest first, optionally of one `type`: the same `{id, type, " +
    "created_at, livemode, data}` that webhook endpoints receive (see the `webhooks` section for each type's `data`).",
  request: { query },
  paginated: true,
  errors: ["invalid_request", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(pageSchema(eventSchema), "A page of events.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const filters = c.req.valid("query");
  const rows = await listEvents(c.get("ctx"), c.get("principal"), filters);
  return c.json(
    toPage(c, rows, filters.limit, (event) => presentEvent(event, c.get("livemode"))),
    200,
  );
};

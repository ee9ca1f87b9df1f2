import type { RouteHandler } from "@hono/zod-openapi";
import { listSubscriptions } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionSchema } from "../../resources/subscription";

export const route = apiRoute({
  operationId: "listSubscriptions",
  method: "get",
  path: "/subscriptions",
  tags: ["Subscriptions"],
  summary: "List subscriptions",
  description: "Newest first, archived (cancelled) ones included; a key scoped to some products sees only theirs.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(subscriptionSchema), "A page of subscriptions.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listSubscriptions(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentSubscription), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { listSubscriptions } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { presentSubscription, subscriptionSchema } from "../../schemas/commerce";

export const route = apiRoute({
  method: "get",
  path: "/subscriptions",
  tags: ["Subscriptions"],
  summary: "List subscriptions",
  description: "Newest first, archived (cancelled) ones included.",
  request: { query: paginationQuery },
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(subscriptionSchema), "A page of subscriptions.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listSubscriptions(domainContext(c.env), c.var.principal, query);
  return c.json(toPage(c, rows, query.limit, presentSubscription), 200);
};

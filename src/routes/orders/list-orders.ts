import type { RouteHandler } from "@hono/zod-openapi";
import { listOrders } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { orderSchema, presentOrder } from "../../resources/order";

export const route = apiRoute({
  operationId: "listOrders",
  method: "get",
  path: "/orders",
  tags: ["Orders"],
  summary: "List orders",
  description: "Newest first; a key scoped to some products sees only their orders.",
  request: { query: paginationQuery },
  paginated: true,
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(orderSchema), "A page of orders, newest first.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listOrders(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentOrder), 200);
};

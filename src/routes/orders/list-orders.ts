import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { listOrders } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { orderSchema, presentOrder } from "../../schemas/commerce";

export const route = apiRoute({
  method: "get",
  path: "/orders",
  tags: ["Orders"],
  summary: "List orders",
  request: { query: paginationQuery },
  errors: ["invalid_request"],
  responses: { 200: jsonContent(pageSchema(orderSchema), "A page of orders, newest first.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listOrders(domainContext(c.env), c.var.principal, query);
  return c.json(toPage(c, rows, query.limit, presentOrder), 200);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { findOrder } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { orderSchema, presentOrder } from "../../schemas/commerce";

export const route = apiRoute({
  method: "get",
  path: "/orders/{id}",
  tags: ["Orders"],
  summary: "Get an order",
  request: { params: z.object({ id: z.string().openapi({ example: "ord_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }) }) },
  errors: ["not_found"],
  responses: { 200: jsonContent(orderSchema, "The order.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentOrder(await findOrder(domainContext(c.env), c.var.principal, c.req.valid("param").id)), 200);
};

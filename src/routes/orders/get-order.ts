import { type RouteHandler, z } from "@hono/zod-openapi";
import { findOrder } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { orderSchema, presentOrder } from "../../resources/order";

export const route = apiRoute({
  operationId: "getOrder",
  method: "get",
  path: "/orders/{id}",
  tags: ["Orders"],
  summary: "Get an order",
  description: "An order of the account; ISP orders move from `provisioning` to `completed`.",
  request: { params: z.object({ id: idParam("order").openapi({ param: { name: "id", in: "path" } }) }) },
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(orderSchema, "The order.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentOrder(await findOrder(c.get("ctx"), c.get("principal"), c.req.valid("param").id)), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { placeOrder } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { newOrder, orderCreateSchema, orderSchema, presentOrder } from "../../resources/order";

export const route = apiRoute({
  operationId: "createOrder",
  method: "post",
  path: "/orders",
  tags: ["Orders"],
  summary: "Place an order",
  description:
    "Bandwidth (`residential`, `mobile`): priced per GB, debited at once, status `completed`, the GB added to the " +
    "product's pool. ISP: debited at once, a batch is created and the order is `provisioning` until its IPs are " +
    "allocated (minutes; longer for long-tail countries). Retries with the same Idempotency-Key never charge twice. " +
    "An order that would take the month's spend past a budget with a hard stop is refused (`budget_exceeded`).",
  request: { body: jsonBody(orderCreateSchema) },
  errors: [
    "insufficient_balance",
    "budget_exceeded",
    "kyc_required",
    "insufficient_inventory",
    "quantity_out_of_range",
    "subuser_not_found",
    "subuser_scope_mismatch",
  ],
  responses: { 201: jsonContent(orderSchema, "The order.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const order = await placeOrder(c.get("ctx"), c.get("principal"), newOrder(c.req.valid("json")));
  return c.json(presentOrder(order), 201);
};

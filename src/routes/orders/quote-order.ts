import type { RouteHandler } from "@hono/zod-openapi";
import { quoteOrder } from "../../domain/orders/quote";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { newOrder, orderCreateSchema, orderQuoteSchema, presentOrderQuote } from "../../resources/order";

export const route = apiRoute({
  operationId: "quoteOrder",
  method: "post",
  path: "/orders/quote",
  tags: ["Orders"],
  // Changes nothing: a read, though its body is an order.
  scope: { access: "read" },
  summary: "Quote an order",
  description:
    "Any order body, bandwidth or ISP: what it would be charged now (priced exactly as the order is), its line " +
    "items, the balance after it, and the error the same order would get now (`insufficient_balance`, `budget_exceeded`, " +
    "`kyc_required`, `insufficient_inventory`, …) in `error`, with `orderable` false. Nothing is charged or " +
    "reserved; a body that is not a valid order is refused as the order would refuse it. A product outside the key's " +
    "product scope is not priced (`total_usd` null, no line items; `error` is the order's 403).",
  request: { body: jsonBody(orderCreateSchema) },
  errors: ["quantity_out_of_range"],
  responses: { 200: jsonContent(orderQuoteSchema, "The quote.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const quote = await quoteOrder(c.get("ctx"), c.get("principal"), newOrder(c.req.valid("json")));
  return c.json(presentOrderQuote(quote), 200);
};

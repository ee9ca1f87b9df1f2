import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createOrder from "./create-order";
import * as getOrder from "./get-order";
import * as listOrders from "./list-orders";
import * as quoteOrder from "./quote-order";

export function orderRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createOrder.route, createOrder.handler);
  app.openapi(quoteOrder.route, quoteOrder.handler);
  app.openapi(listOrders.route, listOrders.handler);
  app.openapi(getOrder.route, getOrder.handler);
}

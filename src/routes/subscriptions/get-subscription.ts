import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { findSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../schemas/commerce";

export const route = apiRoute({
  method: "get",
  path: "/subscriptions/{id}",
  tags: ["Subscriptions"],
  summary: "Get a subscription",
  request: { params: subscriptionIdParam },
  errors: ["not_found"],
  responses: { 200: jsonContent(subscriptionSchema, "The subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subscription = await findSubscription(domainContext(c.env), c.var.principal, c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

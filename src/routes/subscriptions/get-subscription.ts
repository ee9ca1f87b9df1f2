import type { RouteHandler } from "@hono/zod-openapi";
import { findSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../resources/subscription";

export const route = apiRoute({
  operationId: "getSubscription",
  method: "get",
  path: "/subscriptions/{id}",
  tags: ["Subscriptions"],
  summary: "Get a subscription",
  description: "One subscription with its period and the changes pending for its next renewal.",
  request: { params: subscriptionIdParam },
  errors: ["invalid_request", "not_found", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(subscriptionSchema, "The subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subscription = await findSubscription(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

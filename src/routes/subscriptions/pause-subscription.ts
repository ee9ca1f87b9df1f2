import type { RouteHandler } from "@hono/zod-openapi";
import { pauseSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../resources/subscription";

export const route = apiRoute({
  operationId: "pauseSubscription",
  method: "post",
  path: "/subscriptions/{id}/pause",
  tags: ["Subscriptions"],
  summary: "Pause a subscription",
  description: "Stops renewal and keeps the current period's resources (status `paused`).",
  request: { params: subscriptionIdParam },
  errors: ["not_found", "subuser_scope_mismatch", "subscription_not_active"],
  responses: { 200: jsonContent(subscriptionSchema, "The paused subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subscription = await pauseSubscription(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

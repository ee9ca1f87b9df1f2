import type { RouteHandler } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { cancelSubscription, pauseSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/openapi";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../schemas/commerce";

export const pauseRoute = apiRoute({
  method: "post",
  path: "/subscriptions/{id}/pause",
  tags: ["Subscriptions"],
  summary: "Pause a subscription",
  description: "Stops renewal and keeps the current period's resources (status `paused`).",
  request: { params: subscriptionIdParam },
  errors: ["not_found", "subscription_not_active"],
  responses: { 200: jsonContent(subscriptionSchema, "The paused subscription.") },
});

export const pause: RouteHandler<typeof pauseRoute, AppEnv> = async (c) => {
  const subscription = await pauseSubscription(domainContext(c.env), c.var.principal, c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

export const cancelRoute = apiRoute({
  method: "post",
  path: "/subscriptions/{id}/cancel",
  tags: ["Subscriptions"],
  summary: "Cancel a subscription",
  description:
    "Status `cancelling` until the end of the period, then `cancelled` and archived. An ISP batch then enters its " +
    "7-day grace period and is released after it.",
  request: { params: subscriptionIdParam },
  errors: ["not_found", "subscription_not_active"],
  responses: { 200: jsonContent(subscriptionSchema, "The cancelling subscription.") },
});

export const cancel: RouteHandler<typeof cancelRoute, AppEnv> = async (c) => {
  const subscription = await cancelSubscription(domainContext(c.env), c.var.principal, c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

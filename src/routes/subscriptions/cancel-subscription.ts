import type { RouteHandler } from "@hono/zod-openapi";
import { cancelSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../resources/subscription";

export const route = apiRoute({
  operationId: "cancelSubscription",
  method: "post",
  path: "/subscriptions/{id}/cancel",
  tags: ["Subscriptions"],
  summary: "Cancel a subscription",
  description:
    "Status `cancelling` until the end of the period, then `cancelled` and archived. An ISP batch then enters its " +
    "7-day grace period and is released after it.",
  request: { params: subscriptionIdParam },
  errors: ["not_found", "subuser_scope_mismatch", "subscription_not_active"],
  responses: { 200: jsonContent(subscriptionSchema, "The cancelling subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subscription = await cancelSubscription(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { renewSubscriptionNow } from "../../domain/sandbox/lifecycle";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../resources/subscription";
import { tags } from "./shared";

export const route = apiRoute({
  operationId: "renewTestSubscription",
  method: "post",
  path: "/test-helpers/subscriptions/{id}/renew",
  tags,
  sandboxOnly: true,
  scope: { area: "billing" },
  summary: "Renew a subscription now (sandbox)",
  description:
    "The subscription's period ends now and the renewal job acts on it at once: a bandwidth subscription renews " +
    "(charged, its GB added to the pool; `past_due` when the balance cannot pay), a cancelling one is archived, " +
    "an ISP one renews with its batch. Sandbox keys only.",
  request: { params: subscriptionIdParam },
  errors: ["not_found", "subscription_not_active", "subuser_scope_mismatch"],
  responses: { 200: jsonContent(subscriptionSchema, "The subscription after the renewal.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subscription = await renewSubscriptionNow(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentSubscription(subscription), 200);
};

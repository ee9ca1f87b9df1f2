import { type RouteHandler, z } from "@hono/zod-openapi";
import { cycles } from "../../db/schema";
import { ISP_QUANTITY } from "../../domain/isp/batches";
import { updateSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { rangedInteger } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionIdParam, subscriptionSchema, tierName } from "../../resources/subscription";

const body = z
  .strictObject({
    plan: tierName.optional(),
    quantity: rangedInteger(ISP_QUANTITY.min, ISP_QUANTITY.max, "quantity_out_of_range")
      .optional()
      .openapi({ description: "ISP only; 5-5000." }),
    cycle: z.enum(cycles).optional(),
  })
  .openapi("SubscriptionUpdate", { example: { cycle: "annual" } });

export const route = apiRoute({
  operationId: "updateSubscription",
  method: "patch",
  path: "/subscriptions/{id}",
  tags: ["Subscriptions"],
  summary: "Change a subscription",
  description:
    "Upgrades are prorated for the rest of the period and charged now; downgrades take effect at the next renewal " +
    "(never below this period's usage); cycle changes apply at the next renewal. ISP quantity increases provision " +
    "the extra IPs now, prorated; decreases apply at the next renewal.",
  request: { params: subscriptionIdParam, body: jsonBody(body) },
  errors: [
    "not_found",
    "subuser_scope_mismatch",
    "unknown_plan",
    "downgrade_below_usage",
    "insufficient_balance",
    "budget_exceeded",
    "insufficient_inventory",
    "quantity_out_of_range",
    "subscription_not_active",
  ],
  responses: { 200: jsonContent(subscriptionSchema, "The updated subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const subscription = await updateSubscription(
    c.get("ctx"),
    c.get("principal"),
    c.req.valid("param").id,
    c.req.valid("json"),
  );
  return c.json(presentSubscription(subscription), 200);
};

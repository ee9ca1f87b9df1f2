import { type RouteHandler, z } from "@hono/zod-openapi";
import { cycles } from "../../db/schema";
import { domainContext } from "../../domain/context";
import { updateSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { presentSubscription, subscriptionIdParam, subscriptionSchema } from "../../schemas/commerce";

const body = z
  .strictObject({
    plan: z
      .string()
      .regex(/^[a-z-]{1,32}$/, "must be a tier name")
      .optional(),
    quantity: z.number().int().optional().openapi({ description: "ISP only; 5-5000." }),
    cycle: z.enum(cycles).optional(),
  })
  .openapi("SubscriptionUpdate", { example: { plan: "business" } });

export const route = apiRoute({
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
    "unknown_plan",
    "downgrade_below_usage",
    "insufficient_balance",
    "insufficient_inventory",
    "quantity_out_of_range",
    "subscription_not_active",
  ],
  responses: { 200: jsonContent(subscriptionSchema, "The updated subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  const ctx = domainContext(c.env);
  const subscription = await updateSubscription(
    ctx,
    c.var.principal,
    account,
    c.req.valid("param").id,
    c.req.valid("json"),
  );
  return c.json(presentSubscription(subscription), 200);
};

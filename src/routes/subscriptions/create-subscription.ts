import { type RouteHandler, z } from "@hono/zod-openapi";
import { cycles } from "../../db/schema";
import { domainContext } from "../../domain/context";
import { createSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { presentSubscription, subscriptionSchema } from "../../schemas/commerce";

const bandwidth = z
  .strictObject({
    product: z.enum(["residential", "mobile"]),
    plan: z.string().regex(/^[a-z-]{1,32}$/, "must be a tier name such as starter, pro, business"),
    cycle: z.enum(cycles),
  })
  .openapi("BandwidthSubscriptionCreate", { example: { product: "residential", plan: "pro", cycle: "monthly" } });

const isp = z
  .strictObject({ product: z.literal("isp"), batch_id: z.string().min(1), cycle: z.enum(cycles) })
  .openapi("IspSubscriptionCreate", {
    example: { product: "isp", batch_id: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", cycle: "monthly" },
  });

export const route = apiRoute({
  method: "post",
  path: "/subscriptions",
  tags: ["Subscriptions"],
  summary: "Subscribe",
  description:
    "Bandwidth: a tier of a product, charged for the first cycle at once, its GB added to the pool. ISP: turns " +
    "auto-renew on for an existing batch (the current period is already paid).",
  request: { body: jsonBody(z.discriminatedUnion("product", [bandwidth, isp])) },
  errors: [
    "unknown_plan",
    "already_subscribed",
    "insufficient_balance",
    "kyc_required",
    "not_found",
    "batch_not_active",
  ],
  responses: { 201: jsonContent(subscriptionSchema, "The subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const account = await currentAccount(c);
  const subscription = await createSubscription(domainContext(c.env), c.var.principal, account, c.req.valid("json"));
  return c.json(presentSubscription(subscription), 201);
};

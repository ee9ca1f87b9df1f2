import { type RouteHandler, z } from "@hono/zod-openapi";
import { cycles } from "../../db/schema";
import { createSubscription } from "../../domain/subscriptions/subscriptions";
import type { AppEnv } from "../../env";
import { idParam } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { presentSubscription, subscriptionSchema, tierName } from "../../resources/subscription";
import { bandwidthProductSchema } from "../../resources/vocabulary";

const bandwidth = z
  .strictObject({ product: bandwidthProductSchema, plan: tierName, cycle: z.enum(cycles) })
  .openapi("BandwidthSubscriptionCreate", { example: { product: "residential", plan: "pro", cycle: "monthly" } });

const isp = z
  .strictObject({ product: z.literal("isp"), batch_id: idParam("batch"), cycle: z.enum(cycles) })
  .openapi("IspSubscriptionCreate", {
    example: { product: "isp", batch_id: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", cycle: "monthly" },
  });

export const route = apiRoute({
  operationId: "createSubscription",
  method: "post",
  path: "/subscriptions",
  tags: ["Subscriptions"],
  summary: "Subscribe",
  description:
    "Bandwidth: a tier of a product, charged for the first cycle at once, its GB added to the pool. ISP: turns " +
    "auto-renew on for an existing batch (the current period is already paid).",
  request: {
    body: jsonBody(
      z.discriminatedUnion("product", [bandwidth, isp]).openapi({
        example: { product: "isp", batch_id: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", cycle: "monthly" },
      }),
    ),
  },
  errors: [
    "unknown_plan",
    "already_subscribed",
    "insufficient_balance",
    "budget_exceeded",
    "kyc_required",
    "not_found",
    "batch_not_active",
    "subuser_scope_mismatch",
  ],
  responses: { 201: jsonContent(subscriptionSchema, "The subscription.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const subscription = await createSubscription(
    c.get("ctx"),
    c.get("principal"),
    input.product === "isp" ? { product: "isp", batchId: input.batch_id, cycle: input.cycle } : input,
  );
  return c.json(presentSubscription(subscription), 201);
};

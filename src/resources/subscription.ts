import { z } from "@hono/zod-openapi";
import { cycles, type SubscriptionRow, subscriptionStatuses } from "../db/schema";
import { toIso } from "../platform/clock";
import { id, idParam, integer, timestamp, token, usdAmount } from "../platform/fields";
import { fromMinor } from "../platform/money";
import { productSchema } from "./vocabulary";

export const tierName = token(/^[a-z-]{1,32}$/, 32, "must be a tier name such as starter, pro, business");

export const subscriptionIdParam = z.object({
  id: idParam("subscription").openapi({ param: { name: "id", in: "path" } }),
});

export const subscriptionSchema = z
  .object({
    id: id("subscription"),
    product: productSchema,
    plan: tierName.nullable().openapi({ description: "Bandwidth tier: starter, pro, business, enterprise." }),
    batch_id: id("batch").nullable().openapi({ description: "ISP only." }),
    cycle: z.enum(cycles),
    gb_included: integer(0, 100_000_000).nullable().openapi({ description: "Bandwidth only: GB per cycle." }),
    quantity: integer(1, 5000).nullable().openapi({ description: "ISP only." }),
    price_usd: usdAmount().openapi({ description: "Price of one cycle (annual = 12 × monthly − 10%)." }),
    status: z.enum(subscriptionStatuses),
    period_start: timestamp(),
    renews_at: timestamp(),
    pending: z
      .object({ plan: tierName.nullable(), cycle: z.enum(cycles).nullable(), quantity: integer(1, 5000).nullable() })
      .openapi({ description: "Changes that take effect at the next renewal." }),
    archived_at: timestamp().nullable(),
    created_at: timestamp(),
  })
  .openapi("Subscription");

export function presentSubscription(subscription: SubscriptionRow): z.infer<typeof subscriptionSchema> {
  return {
    id: subscription.id,
    product: subscription.product,
    plan: subscription.plan,
    batch_id: subscription.batchId,
    cycle: subscription.cycle,
    gb_included: subscription.gbIncluded,
    quantity: subscription.quantity,
    price_usd: fromMinor(subscription.priceMinor),
    status: subscription.status,
    period_start: toIso(subscription.periodStart),
    renews_at: toIso(subscription.renewsAt),
    pending: {
      plan: subscription.pendingPlan,
      cycle: subscription.pendingCycle,
      quantity: subscription.pendingQuantity,
    },
    archived_at: subscription.archivedAt === null ? null : toIso(subscription.archivedAt),
    created_at: toIso(subscription.createdAt),
  };
}

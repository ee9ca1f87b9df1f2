import { z } from "@hono/zod-openapi";
import type { BatchRow, IspIpRow, OrderRow, SubscriptionRow } from "../db/schema";
import { batchStatuses, products } from "../db/schema";
import { FREE_REPLACEMENT_WINDOW_MS, freeReplacementsPerPeriod } from "../domain/isp/batches";
import { toIso } from "../platform/clock";
import { fromMinor } from "../platform/money";

export const orderSchema = z
  .object({
    id: z.string().openapi({ example: "ord_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    product: z.enum(products),
    status: z.enum(["provisioning", "completed"]),
    total_usd: z.number().openapi({ example: 45 }),
    details: z.record(z.string(), z.unknown()).openapi({
      description:
        "Bandwidth: `gb`, `price_per_gb`. ISP: `batch_id`, `quantity`, `country`, `city`, `asn`, `months`, " +
        "`price_per_ip_month`, `expires_at`.",
      example: { gb: 10, price_per_gb: 4.5 },
    }),
    created_at: z.iso.datetime(),
  })
  .openapi("Order");

export function presentOrder(order: OrderRow): z.infer<typeof orderSchema> {
  return {
    id: order.id,
    product: order.product,
    status: order.status,
    total_usd: fromMinor(order.totalMinor),
    details: order.details,
    created_at: toIso(order.createdAt),
  };
}

export const batchSchema = z
  .object({
    id: z.string().openapi({ example: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    product: z.literal("isp"),
    status: z.enum(batchStatuses),
    subuser: z.string(),
    order_id: z.string(),
    country: z.string(),
    city: z.string().nullable(),
    asn: z.number().int(),
    quantity: z.number().int(),
    price_per_ip_month_usd: z.number(),
    period_start: z.iso.datetime(),
    expires_at: z.iso.datetime(),
    grace_until: z.iso.datetime().nullable(),
    auto_renew: z.boolean(),
    replacements: z.object({
      free_until: z.iso.datetime().openapi({ description: "Every replacement is free until then (14 days)." }),
      free_per_period: z.number().int(),
      used_this_period: z.number().int(),
    }),
    refresh_used_this_period: z.boolean(),
    created_at: z.iso.datetime(),
  })
  .openapi("IspBatch");

export function presentBatch(batch: BatchRow): z.infer<typeof batchSchema> {
  return {
    id: batch.id,
    product: "isp",
    status: batch.status,
    subuser: batch.subuserId,
    order_id: batch.orderId,
    country: batch.country,
    city: batch.city,
    asn: batch.asn,
    quantity: batch.quantity,
    price_per_ip_month_usd: fromMinor(batch.pricePerIpMonthMinor),
    period_start: toIso(batch.periodStart),
    expires_at: toIso(batch.expiresAt),
    grace_until: batch.graceUntil === null ? null : toIso(batch.graceUntil),
    auto_renew: batch.autoRenew,
    replacements: {
      free_until: toIso(batch.purchasedAt + FREE_REPLACEMENT_WINDOW_MS),
      free_per_period: freeReplacementsPerPeriod(batch.quantity),
      used_this_period: batch.replacementsUsed,
    },
    refresh_used_this_period: batch.refreshUsed,
    created_at: toIso(batch.createdAt),
  };
}

export const ispIpSchema = z
  .object({
    ip_id: z.string().openapi({ example: "ip_0000042" }),
    ip: z.string().openapi({ example: "100.64.0.42" }),
    port: z.number().int().openapi({ example: 8000 }),
    country: z.string(),
    city: z.string().nullable(),
    asn: z.number().int(),
    carrier: z.string(),
    status: z.string(),
    assigned_at: z.iso.datetime().nullable(),
  })
  .openapi("IspIp");

export function presentIp(ip: IspIpRow): z.infer<typeof ispIpSchema> {
  return {
    ip_id: ip.id,
    ip: ip.ip,
    port: ip.port,
    country: ip.country,
    city: ip.city,
    asn: ip.asn,
    carrier: ip.carrier,
    status: ip.status,
    assigned_at: ip.assignedAt === null ? null : toIso(ip.assignedAt),
  };
}

export const batchIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
});

export const subscriptionSchema = z
  .object({
    id: z.string().openapi({ example: "sbn_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    product: z.enum(products),
    plan: z.string().nullable().openapi({ description: "Bandwidth tier: starter, pro, business, enterprise." }),
    batch_id: z.string().nullable().openapi({ description: "ISP only." }),
    cycle: z.enum(["monthly", "annual"]),
    gb_included: z.number().int().nullable().openapi({ description: "Bandwidth only: GB per cycle." }),
    quantity: z.number().int().nullable().openapi({ description: "ISP only." }),
    price_usd: z.number().openapi({ description: "Price of one cycle (annual = 12 × monthly − 10%)." }),
    status: z.enum(["active", "paused", "cancelling", "past_due", "cancelled"]),
    period_start: z.iso.datetime(),
    renews_at: z.iso.datetime(),
    pending: z
      .object({
        plan: z.string().nullable(),
        cycle: z.enum(["monthly", "annual"]).nullable(),
        quantity: z.number().int().nullable(),
      })
      .openapi({ description: "Changes that take effect at the next renewal." }),
    archived_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
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

export const subscriptionIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "sbn_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
});

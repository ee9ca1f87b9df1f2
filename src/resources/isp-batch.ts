import { z } from "@hono/zod-openapi";
import { type BatchRow, batchStatuses, type IspIpRow, ipStatuses } from "../db/schema";
import { FREE_REPLACEMENT_WINDOW_MS, freeReplacementsPerPeriod } from "../domain/isp/batches";
import type { InventoryRow } from "../domain/isp/inventory";
import { toIso } from "../platform/clock";
import { countryCode, id, idParam, integer, ipText, list, text, timestamp, token, usdAmount } from "../platform/fields";
import { fromMinor } from "../platform/money";

export const batchIdParam = z.object({ id: idParam("batch").openapi({ param: { name: "id", in: "path" } }) });

const city = token(/^[a-z0-9]{1,40}$/, 40);
const asn = integer(1, 4_294_967_295);

export const batchSchema = z
  .object({
    id: id("batch"),
    product: z.literal("isp"),
    status: z.enum(batchStatuses),
    subuser: id("subuser"),
    order_id: id("order"),
    country: countryCode(),
    city: city.nullable(),
    asn,
    quantity: integer(1, 5000),
    price_per_ip_month_usd: usdAmount(),
    period_start: timestamp(),
    expires_at: timestamp(),
    grace_until: timestamp().nullable(),
    auto_renew: z.boolean(),
    replacements: z.object({
      free_until: timestamp().openapi({ description: "Every replacement is free until then (14 days)." }),
      free_per_period: integer(0, 500),
      used_this_period: integer(0, 5000),
    }),
    refresh_used_this_period: z.boolean(),
    created_at: timestamp(),
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
    ip_id: token(/^ip_[0-9A-Za-z]+$/, 40).openapi({ example: "ip_0000042" }),
    ip: ipText().openapi({ example: "100.64.0.42" }),
    port: integer(1, 65_535).openapi({ example: 8000 }),
    country: countryCode(),
    city: city.nullable(),
    asn,
    carrier: text(100),
    status: z.enum([...ipStatuses, "released"]),
    assigned_at: timestamp().nullable(),
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

export const inventorySchema = z
  .object({
    data: list(
      z.object({
        country: countryCode(),
        asn,
        carrier: text(100),
        premium: z.boolean().openapi({ description: "Premium ASNs cost about 20% more." }),
        price_per_ip_month_usd: usdAmount(),
        available: integer(0, 100_000_000),
        cities: list(z.object({ city, available: integer(0, 100_000_000) }), 1000).openapi({
          description: "Cities can be chosen in tier-1 countries only; elsewhere this is empty.",
        }),
      }),
      10_000,
    ),
  })
  .openapi("IspInventory", {
    example: {
      data: [
        {
          country: "US",
          asn: 7922,
          carrier: "Comcast",
          premium: false,
          price_per_ip_month_usd: 6,
          available: 6400,
          cities: [{ city: "newyork", available: 6000 }],
        },
      ],
    },
  });

export function presentInventory(rows: InventoryRow[]): z.infer<typeof inventorySchema> {
  return {
    data: rows.map(({ pricePerIpMonthMinor, ...row }) => ({
      ...row,
      price_per_ip_month_usd: fromMinor(pricePerIpMonthMinor),
    })),
  };
}

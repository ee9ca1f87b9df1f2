import { z } from "@hono/zod-openapi";
import { type IspOrderDetails, type OrderRow, orderStatuses } from "../db/schema";
import { toIso } from "../platform/clock";
import { countryCode, id, integer, timestamp, token, usdAmount } from "../platform/fields";
import { fromMinor } from "../platform/money";
import { productSchema } from "./vocabulary";

const bandwidthDetails = z
  .object({ gb: z.number().openapi({ multipleOf: 0.001 }), price_per_gb: usdAmount() })
  .openapi("BandwidthOrderDetails");

const ispDetails = z
  .object({
    batch_id: id("batch"),
    quantity: integer(5, 5000),
    country: countryCode(),
    city: token(/^[a-z0-9]{1,40}$/, 40).nullable(),
    asn: integer(1, 4_294_967_295),
    months: integer(1, 36),
    price_per_ip_month: usdAmount(),
    expires_at: timestamp(),
  })
  .openapi("IspOrderDetails");

export const orderSchema = z
  .object({
    id: id("order"),
    product: productSchema,
    status: z.enum(orderStatuses),
    total_usd: usdAmount().openapi({ example: 45 }),
    details: z.union([bandwidthDetails, ispDetails]).openapi({ description: "What the order bought, per product." }),
    created_at: timestamp(),
  })
  .openapi("Order");

export function presentOrder(order: OrderRow): z.infer<typeof orderSchema> {
  return {
    id: order.id,
    product: order.product,
    status: order.status,
    total_usd: fromMinor(order.totalMinor),
    details:
      "batchId" in order.details
        ? presentIspDetails(order.details)
        : {
            gb: order.details.gb,
            price_per_gb: fromMinor(order.details.pricePerGbMinor),
          },
    created_at: toIso(order.createdAt),
  };
}

function presentIspDetails(details: IspOrderDetails): z.infer<typeof ispDetails> {
  return {
    batch_id: details.batchId,
    quantity: details.quantity,
    country: details.country,
    city: details.city,
    asn: details.asn,
    months: details.months,
    price_per_ip_month: fromMinor(details.pricePerIpMonthMinor),
    expires_at: toIso(details.expiresAt),
  };
}

import { z } from "@hono/zod-openapi";
import { type IspOrderDetails, type OrderRow, orderStatuses } from "../db/schema";
import { ISP_QUANTITY } from "../domain/isp/batches";
import type { NewOrder } from "../domain/orders/orders";
import type { OrderQuote } from "../domain/orders/quote";
import { toIso } from "../platform/clock";
import {
  countryCode,
  decimal,
  id,
  idParam,
  integer,
  rangedInteger,
  text,
  timestamp,
  token,
  usdAmount,
} from "../platform/fields";
import { fromMinor } from "../platform/money";
import { errorCodeSchema } from "../platform/route-definitions";
import { bandwidthProductSchema, productSchema } from "./vocabulary";

const bandwidthOrder = z
  .strictObject({
    product: bandwidthProductSchema,
    gb: decimal({ unit: 0.001, min: 0.001, max: 1_000_000 }).openapi({
      description: "GB to buy, in steps of 0.001 GB (1 MB).",
    }),
  })
  .openapi("BandwidthOrderCreate", { example: { product: "residential", gb: 10 } });

const ispOrder = z
  .strictObject({
    product: z.literal("isp"),
    country: countryCode().transform((code) => code.toUpperCase()),
    city: token(/^[a-z0-9]{1,40}$/, 40, "must be a lowercase city slug (e.g. newyork)")
      .nullable()
      .optional(),
    asn: integer(1, 4_294_967_295),
    quantity: rangedInteger(ISP_QUANTITY.min, ISP_QUANTITY.max, "quantity_out_of_range").openapi({
      description: "5-5000 (else 422 quantity_out_of_range).",
    }),
    months: integer(1, 36),
    subuser: idParam("subuser").openapi({ description: "A sub-user of yours with the isp product." }),
  })
  .openapi("IspOrderCreate", {
    example: {
      product: "isp",
      country: "US",
      city: "newyork",
      asn: 7922,
      quantity: 10,
      months: 1,
      subuser: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
    },
  });

/** An order's body: bandwidth or ISP, told apart by `product`. */
export const orderCreateSchema = z.discriminatedUnion("product", [bandwidthOrder, ispOrder]);

export function newOrder(body: z.infer<typeof orderCreateSchema>): NewOrder {
  return body.product === "isp" ? { ...body, subuserId: body.subuser } : body;
}

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

const lineItemSchema = z
  .object({
    description: text(200).openapi({ example: "10 GB of residential bandwidth" }),
    quantity: z.number().openapi({ description: "GB, or IP-months (IPs × months).", example: 10 }),
    unit: z.enum(["gb", "ip_month"]),
    unit_price_usd: usdAmount(),
    amount_usd: usdAmount().openapi({ example: 45 }),
  })
  .openapi("OrderQuoteLineItem");

export const orderQuoteSchema = z
  .object({
    product: productSchema,
    total_usd: usdAmount()
      .nullable()
      .openapi({ description: "What the order would be charged now; null when it cannot be priced.", example: 45 }),
    line_items: z
      .array(lineItemSchema)
      .max(1)
      .openapi({ description: "One line per thing bought; none when unpriced." }),
    balance_usd: usdAmount().openapi({ description: "The account's balance now.", example: 100 }),
    balance_after_usd: z
      .number()
      .nullable()
      .openapi({ description: "The balance after the order; negative when the balance cannot cover it.", example: 55 }),
    orderable: z.boolean().openapi({ description: "Whether the same order placed now would go through." }),
    error: z
      .object({ status: integer(400, 599), code: errorCodeSchema, message: text(1000) })
      .nullable()
      .openapi({ description: "The error the same order would get now (status and code as it would answer)." }),
  })
  .openapi("OrderQuote");

export function presentOrderQuote(quote: OrderQuote): z.infer<typeof orderQuoteSchema> {
  return {
    product: quote.product,
    total_usd: quote.totalMinor === null ? null : fromMinor(quote.totalMinor),
    line_items: quote.lineItems.map((item) => ({
      description: item.description,
      quantity: item.quantity,
      unit: item.unit,
      unit_price_usd: fromMinor(item.unitPriceMinor),
      amount_usd: fromMinor(item.amountMinor),
    })),
    balance_usd: fromMinor(quote.balanceMinor),
    balance_after_usd: quote.balanceAfterMinor === null ? null : fromMinor(quote.balanceAfterMinor),
    orderable: quote.error === null,
    error: quote.error && { status: quote.error.status, code: quote.error.code, message: quote.error.message },
  };
}

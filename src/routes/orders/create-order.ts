import { type RouteHandler, z } from "@hono/zod-openapi";
import { domainContext } from "../../domain/context";
import { orderBandwidth, orderIsp } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { orderSchema, presentOrder } from "../../schemas/commerce";

const bandwidthOrder = z
  .strictObject({
    product: z.enum(["residential", "mobile"]),
    gb: z
      .number()
      .positive()
      .max(1_000_000)
      .refine((gb) => Math.abs(gb * 1000 - Math.round(gb * 1000)) < 1e-6, "must have at most 3 decimals"),
  })
  .openapi("BandwidthOrderCreate", { example: { product: "residential", gb: 10 } });

const ispOrder = z
  .strictObject({
    product: z.literal("isp"),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, "must be an ISO 3166-1 alpha-2 code")
      .transform((v) => v.toUpperCase()),
    city: z
      .string()
      .regex(/^[a-z0-9]{1,40}$/, "must be a lowercase city slug (e.g. newyork)")
      .nullable()
      .optional(),
    asn: z.number().int().positive(),
    quantity: z.number().int().openapi({ description: "5-5000 (else 422 quantity_out_of_range)." }),
    months: z.number().int().min(1).max(36),
    subuser: z.string().min(1).openapi({ description: "A sub-user of yours with the isp product." }),
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

export const route = apiRoute({
  method: "post",
  path: "/orders",
  tags: ["Orders"],
  summary: "Place an order",
  description:
    "Bandwidth (`residential`, `mobile`): priced per GB, debited at once, status `completed`, the GB added to the " +
    "product's pool. ISP: debited at once, a batch is created and the order is `provisioning` until its IPs are " +
    "allocated (minutes; longer for long-tail countries). Retries with the same Idempotency-Key never charge twice.",
  request: { body: jsonBody(z.discriminatedUnion("product", [bandwidthOrder, ispOrder])) },
  errors: [
    "insufficient_balance",
    "kyc_required",
    "insufficient_inventory",
    "quantity_out_of_range",
    "subuser_not_found",
  ],
  responses: { 201: jsonContent(orderSchema, "The order.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const ctx = domainContext(c.env);
  const account = await currentAccount(c);
  const order =
    input.product === "isp"
      ? await orderIsp(ctx, c.var.principal, account, input)
      : await orderBandwidth(ctx, account, input);
  return c.json(presentOrder(order), 201);
};

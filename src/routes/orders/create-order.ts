import { type RouteHandler, z } from "@hono/zod-openapi";
import { ISP_QUANTITY } from "../../domain/isp/batches";
import { placeOrder } from "../../domain/orders/orders";
import type { AppEnv } from "../../env";
import { countryCode, decimal, idParam, integer, rangedInteger, token } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { orderSchema, presentOrder } from "../../resources/order";
import { bandwidthProductSchema } from "../../resources/vocabulary";

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

export const route = apiRoute({
  operationId: "createOrder",
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
    "subuser_scope_mismatch",
  ],
  responses: { 201: jsonContent(orderSchema, "The order.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const order = await placeOrder(
    c.get("ctx"),
    c.get("principal"),
    input.product === "isp" ? { ...input, subuserId: input.subuser } : input,
  );
  return c.json(presentOrder(order), 201);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { priceCatalogue, setIspAsnPrice } from "../../domain/billing/prices";
import type { AppEnv } from "../../env";
import { queryInteger, text, token, usd } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { internalRoute, jsonBody } from "../../platform/route-definitions";
import { presentPriceCatalogue } from "../../resources/admin";
import { catalogueResponse } from "./get-price-catalogue";
import { MAX_ADMIN_USD, tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminSetIspAsnPrice",
    method: "put",
    path: "/prices/isp/{country}/{asn}",
    tags,
    summary: "Set the price of an ISP ASN",
    description: "Applies to orders placed from now on; existing batches keep their price.",
    request: {
      params: z.object({
        country: token(/^[A-Z]{2}$/, 2, "must be an upper-case ISO 3166-1 alpha-2 code"),
        asn: queryInteger(1, 4_294_967_295),
      }),
      body: jsonBody(
        z
          .strictObject({
            carrier: text(100, 1),
            premium: z.boolean().default(false),
            price_per_ip_month_usd: usd(MAX_ADMIN_USD),
          })
          .openapi("IspAsnPrice", { example: { carrier: "Comcast", premium: false, price_per_ip_month_usd: 6 } }),
      ),
    },
    responses: catalogueResponse,
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { carrier, premium, price_per_ip_month_usd } = c.req.valid("json");
  await setIspAsnPrice(c.get("ctx"), {
    ...c.req.valid("param"),
    carrier,
    premium,
    pricePerIpMonthMinor: toMinor(price_per_ip_month_usd),
  });
  return c.json(presentPriceCatalogue(await priceCatalogue(c.get("ctx"))), 200);
};

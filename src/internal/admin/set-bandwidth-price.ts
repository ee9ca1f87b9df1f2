import { type RouteHandler, z } from "@hono/zod-openapi";
import { priceCatalogue, setBandwidthPrice } from "../../domain/billing/prices";
import type { AppEnv } from "../../env";
import { usd } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { internalRoute, jsonBody } from "../../platform/route-definitions";
import { presentPriceCatalogue } from "../../resources/admin";
import { catalogueResponse } from "./get-price-catalogue";
import { bandwidthProduct, MAX_ADMIN_USD, tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminSetBandwidthPrice",
    method: "put",
    path: "/prices/bandwidth/{product}",
    tags,
    summary: "Set a pay-as-you-go bandwidth price",
    description: "Applies to orders placed from now on.",
    request: {
      params: z.object({ product: bandwidthProduct }),
      body: jsonBody(
        z
          .strictObject({ price_per_gb_usd: usd(MAX_ADMIN_USD) })
          .openapi("BandwidthPrice", { example: { price_per_gb_usd: 4.5 } }),
      ),
    },
    responses: catalogueResponse,
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await setBandwidthPrice(c.get("ctx"), c.req.valid("param").product, toMinor(c.req.valid("json").price_per_gb_usd));
  return c.json(presentPriceCatalogue(await priceCatalogue(c.get("ctx"))), 200);
};

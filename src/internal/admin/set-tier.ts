import { type RouteHandler, z } from "@hono/zod-openapi";
import { priceCatalogue, setTier } from "../../domain/billing/prices";
import type { AppEnv } from "../../env";
import { token } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { internalRoute, jsonBody } from "../../platform/route-definitions";
import { presentPriceCatalogue } from "../../resources/admin";
import { catalogueResponse } from "./get-price-catalogue";
import { bandwidthProduct, tags } from "./shared";
import { tierBody } from "./tier-body";

export const route = internalRoute(
  {
    operationId: "adminSetTier",
    method: "put",
    path: "/prices/tiers/{product}/{plan}",
    tags,
    summary: "Set a subscription tier",
    description: "Creates or changes a tier; subscriptions take the new terms at their next renewal.",
    request: {
      params: z.object({ product: bandwidthProduct, plan: token(/^[a-z-]{1,32}$/, 32, "must be a tier name") }),
      body: jsonBody(tierBody),
    },
    responses: catalogueResponse,
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { gb_included, monthly_price_usd } = c.req.valid("json");
  await setTier(c.get("ctx"), {
    ...c.req.valid("param"),
    gbIncluded: gb_included,
    monthlyPriceMinor: toMinor(monthly_price_usd),
  });
  return c.json(presentPriceCatalogue(await priceCatalogue(c.get("ctx"))), 200);
};

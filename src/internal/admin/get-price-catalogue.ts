import type { RouteHandler } from "@hono/zod-openapi";
import { priceCatalogue } from "../../domain/billing/prices";
import type { AppEnv } from "../../env";
import { internalRoute, jsonContent } from "../../platform/route-definitions";
import { presentPriceCatalogue, priceCatalogueSchema } from "../../resources/admin";
import { tags } from "./shared";

/** The answer of every price operation: the whole catalogue as it now is. */
export const catalogueResponse = { 200: jsonContent(priceCatalogueSchema, "The catalogue.") };

export const route = internalRoute(
  {
    operationId: "adminGetPriceCatalogue",
    method: "get",
    path: "/prices",
    tags,
    summary: "The price catalogue",
    description: "Bandwidth prices per GB, ISP prices per ASN, and subscription tiers.",
    responses: catalogueResponse,
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentPriceCatalogue(await priceCatalogue(c.get("ctx"))), 200);
};

import { z } from "@hono/zod-openapi";
import { integer, usd } from "../../platform/fields";
import { MAX_ADMIN_USD } from "./shared";

/** A tier's terms, as operators set them for the catalogue or for one account. */
export const tierBody = z
  .strictObject({ gb_included: integer(1, 10_000_000), monthly_price_usd: usd(MAX_ADMIN_USD) })
  .openapi("TierPrice", { example: { gb_included: 500, monthly_price_usd: 1500 } });

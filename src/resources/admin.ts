import { z } from "@hono/zod-openapi";
import { type AccountRow, type ApiKeyRow, type LimitOverrides, products } from "../db/schema";
import { isLiveToken, keyModes } from "../domain/api-keys/api-keys";
import type { PriceCatalogue } from "../domain/billing/prices";
import { toIso } from "../platform/clock";
import { countryCode, id, integer, list, text, timestamp, token, usdAmount } from "../platform/fields";
import { fromMinor } from "../platform/money";
import { accountSchema, presentAccount } from "./account";
import { bandwidthProductSchema, productListSchema, productSchema } from "./vocabulary";

const limitValue = integer(1, 1_000_000_000);
const perProduct = z.strictObject({ residential: limitValue.optional(), mobile: limitValue.optional() });

export const limitOverridesSchema = z
  .strictObject({
    api_burst_per_min: limitValue.optional(),
    api_daily: limitValue.nullable().optional().openapi({ description: "null = unlimited" }),
    concurrent: perProduct.optional(),
    rps: perProduct.optional(),
  })
  .openapi("LimitOverrides", { example: { api_burst_per_min: 5000, concurrent: { residential: 10000 } } });

type LimitOverridesResource = z.infer<typeof limitOverridesSchema>;

export function toLimitOverrides(input: LimitOverridesResource): LimitOverrides {
  const { api_burst_per_min, api_daily, ...perProducts } = input;
  return {
    ...perProducts,
    ...(api_burst_per_min === undefined ? {} : { apiBurstPerMin: api_burst_per_min }),
    ...(api_daily === undefined ? {} : { apiDaily: api_daily }),
  };
}

function presentLimitOverrides(limits: LimitOverrides): LimitOverridesResource {
  const { apiBurstPerMin, apiDaily, concurrent, rps } = limits;
  return {
    ...(apiBurstPerMin === undefined ? {} : { api_burst_per_min: apiBurstPerMin }),
    ...(apiDaily === undefined ? {} : { api_daily: apiDaily }),
    ...(concurrent ? { concurrent } : {}),
    ...(rps ? { rps } : {}),
  };
}

export const adminAccountSchema = accountSchema
  .extend({ risk_review: z.boolean(), limits: limitOverridesSchema.nullable() })
  .openapi("AdminAccount");

export function presentAdminAccount(account: AccountRow): z.infer<typeof adminAccountSchema> {
  return {
    ...presentAccount(account),
    risk_review: account.riskReview,
    limits: account.limits ? presentLimitOverrides(account.limits) : null,
  };
}

export const productScopeSchema = productListSchema;

export const apiKeySchema = z
  .object({
    id: id("apiKey"),
    token_hint: token(/^(live|test)_[0-9A-Za-z]{6}$/, 11).openapi({
      description: "First characters of the token.",
      example: "live_Ab12Cd",
    }),
    mode: z.enum(keyModes).openapi({ description: "`test`: a sandbox key, acting on the sandbox twin `account_id`." }),
    account_id: id("account"),
    products: list(productSchema, products.length)
      .nullable()
      .openapi({ description: "Product scope; null = all products." }),
    created_at: timestamp(),
    revoked_at: timestamp().nullable(),
  })
  .openapi("ApiKey");

export function presentApiKey(key: ApiKeyRow): z.infer<typeof apiKeySchema> {
  return {
    id: key.id,
    token_hint: key.tokenHint,
    mode: isLiveToken(key.tokenHint) ? "live" : "test",
    account_id: key.accountId,
    products: key.products,
    created_at: toIso(key.createdAt),
    revoked_at: key.revokedAt === null ? null : toIso(key.revokedAt),
  };
}

export const priceCatalogueSchema = z
  .object({
    bandwidth: list(z.object({ product: bandwidthProductSchema, price_per_gb_usd: usdAmount() }), 2),
    isp: list(
      z.object({
        country: countryCode(),
        asn: integer(1, 4_294_967_295),
        carrier: text(100),
        premium: z.boolean(),
        price_per_ip_month_usd: usdAmount(),
      }),
      10_000,
    ),
    tiers: list(
      z.object({
        product: bandwidthProductSchema,
        plan: token(/^[a-z-]{1,32}$/, 32),
        gb_included: integer(1, 10_000_000),
        monthly_price_usd: usdAmount(),
      }),
      100,
    ),
  })
  .openapi("PriceCatalogue");

export function presentPriceCatalogue(catalogue: PriceCatalogue): z.infer<typeof priceCatalogueSchema> {
  return {
    bandwidth: catalogue.bandwidth.map((row) => ({
      product: row.product,
      price_per_gb_usd: fromMinor(row.pricePerGbMinor),
    })),
    isp: catalogue.isp.map((row) => ({
      country: row.country,
      asn: row.asn,
      carrier: row.carrier,
      premium: row.premium,
      price_per_ip_month_usd: fromMinor(row.pricePerIpMonthMinor),
    })),
    tiers: catalogue.tiers.map((row) => ({
      product: row.product,
      plan: row.plan,
      gb_included: row.gbIncluded,
      monthly_price_usd: fromMinor(row.monthlyPriceMinor),
    })),
  };
}

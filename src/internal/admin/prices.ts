import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { database } from "../../db/client";
import { bandwidthPrices, customTiers, ispAsns, subscriptionTiers } from "../../db/schema";
import { findAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { fromMinor, hasCentPrecision, toMinor } from "../../platform/money";
import { internalRoute, jsonBody, jsonContent } from "../../platform/openapi";

const tags = ["Internal: admin"];
const usd = z.number().positive().max(1_000_000).refine(hasCentPrecision, "must have at most 2 decimals");
const bandwidthProduct = z.enum(["residential", "mobile"]);
const tierPlan = z.string().regex(/^[a-z-]{1,32}$/, "must be a tier name");

const catalogueSchema = z
  .object({
    bandwidth: z.array(z.object({ product: bandwidthProduct, price_per_gb_usd: z.number() })),
    isp: z.array(
      z.object({
        country: z.string(),
        asn: z.number().int(),
        carrier: z.string(),
        premium: z.boolean(),
        price_per_ip_month_usd: z.number(),
      }),
    ),
    tiers: z.array(
      z.object({
        product: bandwidthProduct,
        plan: z.string(),
        gb_included: z.number().int(),
        monthly_price_usd: z.number(),
      }),
    ),
  })
  .openapi("PriceCatalogue");

const getCatalogueRoute = internalRoute(
  {
    method: "get",
    path: "/prices",
    tags,
    summary: "The price catalogue",
    responses: { 200: jsonContent(catalogueSchema, "Every price.") },
  },
  "AdminToken",
);

const putBandwidthRoute = internalRoute(
  {
    method: "put",
    path: "/prices/bandwidth/{product}",
    tags,
    summary: "Set a pay-as-you-go bandwidth price",
    request: {
      params: z.object({ product: bandwidthProduct }),
      body: jsonBody(
        z.strictObject({ price_per_gb_usd: usd }).openapi("BandwidthPrice", { example: { price_per_gb_usd: 4.5 } }),
      ),
    },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(catalogueSchema, "The catalogue.") },
  },
  "AdminToken",
);

const putIspRoute = internalRoute(
  {
    method: "put",
    path: "/prices/isp/{country}/{asn}",
    tags,
    summary: "Set the price of an ISP ASN",
    request: {
      params: z.object({
        country: z.string().regex(/^[A-Z]{2}$/, "must be an upper-case ISO 3166-1 alpha-2 code"),
        asn: z.coerce.number().int().positive(),
      }),
      body: jsonBody(
        z
          .strictObject({
            carrier: z.string().min(1).max(100),
            premium: z.boolean().default(false),
            price_per_ip_month_usd: usd,
          })
          .openapi("IspAsnPrice", { example: { carrier: "Comcast", premium: false, price_per_ip_month_usd: 6 } }),
      ),
    },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(catalogueSchema, "The catalogue.") },
  },
  "AdminToken",
);

const tierBody = z
  .strictObject({ gb_included: z.number().int().positive().max(10_000_000), monthly_price_usd: usd })
  .openapi("TierPrice", { example: { gb_included: 500, monthly_price_usd: 1500 } });

const putTierRoute = internalRoute(
  {
    method: "put",
    path: "/prices/tiers/{product}/{plan}",
    tags,
    summary: "Set a subscription tier",
    request: { params: z.object({ product: bandwidthProduct, plan: tierPlan }), body: jsonBody(tierBody) },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(catalogueSchema, "The catalogue.") },
  },
  "AdminToken",
);

const putCustomTierRoute = internalRoute(
  {
    method: "put",
    path: "/accounts/{id}/custom-tiers/{product}",
    tags,
    summary: "Set an account's enterprise (custom) tier",
    description: "Makes `plan: enterprise` subscribable for that account and product.",
    request: { params: z.object({ id: z.string(), product: bandwidthProduct }), body: jsonBody(tierBody) },
    errors: ["invalid_request", "not_found"],
    responses: {
      200: jsonContent(
        z.object({
          account_id: z.string(),
          product: bandwidthProduct,
          gb_included: z.number().int(),
          monthly_price_usd: z.number(),
        }),
        "The custom tier.",
      ),
    },
  },
  "AdminToken",
);

async function catalogue(env: Cloudflare.Env) {
  const db = database(env.DB);
  const [bandwidth, isp, tiers] = await Promise.all([
    db.select().from(bandwidthPrices),
    db.select().from(ispAsns).orderBy(ispAsns.country, ispAsns.asn),
    db.select().from(subscriptionTiers).orderBy(subscriptionTiers.product, subscriptionTiers.monthlyPriceMinor),
  ]);
  return {
    bandwidth: bandwidth.map((row) => ({ product: row.product, price_per_gb_usd: fromMinor(row.pricePerGbMinor) })),
    isp: isp.map((row) => ({
      country: row.country,
      asn: row.asn,
      carrier: row.carrier,
      premium: row.premium,
      price_per_ip_month_usd: fromMinor(row.pricePerIpMonthMinor),
    })),
    tiers: tiers.map((row) => ({
      product: row.product,
      plan: row.plan,
      gb_included: row.gbIncluded,
      monthly_price_usd: fromMinor(row.monthlyPriceMinor),
    })),
  };
}

export function adminPriceRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getCatalogueRoute, async (c) => c.json(await catalogue(c.env), 200));

  app.openapi(putBandwidthRoute, async (c) => {
    const { product } = c.req.valid("param");
    const pricePerGbMinor = toMinor(c.req.valid("json").price_per_gb_usd);
    await database(c.env.DB)
      .insert(bandwidthPrices)
      .values({ product, pricePerGbMinor })
      .onConflictDoUpdate({ target: bandwidthPrices.product, set: { pricePerGbMinor } });
    return c.json(await catalogue(c.env), 200);
  });

  app.openapi(putIspRoute, async (c) => {
    const { country, asn } = c.req.valid("param");
    const body = c.req.valid("json");
    const values = {
      carrier: body.carrier,
      premium: body.premium,
      pricePerIpMonthMinor: toMinor(body.price_per_ip_month_usd),
    };
    await database(c.env.DB)
      .insert(ispAsns)
      .values({ country, asn, ...values })
      .onConflictDoUpdate({ target: [ispAsns.country, ispAsns.asn], set: values });
    return c.json(await catalogue(c.env), 200);
  });

  app.openapi(putTierRoute, async (c) => {
    const { product, plan } = c.req.valid("param");
    const body = c.req.valid("json");
    const values = { gbIncluded: body.gb_included, monthlyPriceMinor: toMinor(body.monthly_price_usd) };
    await database(c.env.DB)
      .insert(subscriptionTiers)
      .values({ product, plan, ...values })
      .onConflictDoUpdate({ target: [subscriptionTiers.product, subscriptionTiers.plan], set: values });
    return c.json(await catalogue(c.env), 200);
  });

  app.openapi(putCustomTierRoute, async (c) => {
    const { id, product } = c.req.valid("param");
    const db = database(c.env.DB);
    const account = await findAccount(db, id);
    const body = c.req.valid("json");
    const values = { gbIncluded: body.gb_included, monthlyPriceMinor: toMinor(body.monthly_price_usd) };
    await db
      .insert(customTiers)
      .values({ accountId: account.id, product, ...values })
      .onConflictDoUpdate({ target: [customTiers.accountId, customTiers.product], set: values });
    return c.json(
      { account_id: account.id, product, gb_included: body.gb_included, monthly_price_usd: body.monthly_price_usd },
      200,
    );
  });
}

import { and, eq, sql } from "drizzle-orm";
import { bandwidthPrices, type Cycle, customTiers, ispAsns, subscriptionTiers } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import type { Minor } from "../../platform/money";
import type { BandwidthProduct } from "../../vocabulary";
import { commitAudited } from "../audit/audit-log";
import type { DomainContext } from "../context";

export type { BandwidthProduct };

/** Annual cycles are priced 10% below twelve monthly cycles (spec §2.6). */
export const ANNUAL_DISCOUNT_PERCENT = 10;

/** GB (up to 3 decimals) × price per GB, rounded up to the cent so no order is free. */
export function bandwidthTotal(gb: number, pricePerGb: Minor): Minor {
  return Math.ceil((Math.round(gb * 1000) * pricePerGb) / 1000);
}

/**
 * The same price as `bandwidthTotal`, computed by the database from the catalogue in force when the batch
 * commits (so an order needs no read before its write): MB × price per GB / 1000, rounded up in integers.
 */
export function bandwidthPriceSql(product: BandwidthProduct, mb: number) {
  const perGb = sql<Minor>`(SELECT ${bandwidthPrices.pricePerGbMinor} FROM ${bandwidthPrices} WHERE ${bandwidthPrices.product} = ${product})`;
  // D1 binds JS numbers as REAL: cast, so that the arithmetic (and the rounding up) is in exact integers.
  return { perGb, total: sql<Minor>`((CAST(${mb} AS INTEGER) * ${perGb} + 999) / 1000)` };
}

/** The bandwidth price of `mb` MB at today's catalogue, as an order would be charged; undefined when not sold. */
export function bandwidthPrice(ctx: DomainContext, product: BandwidthProduct, mb: number) {
  const price = bandwidthPriceSql(product, mb);
  return ctx.db
    .select({ perGb: price.perGb, total: price.total })
    .from(bandwidthPrices)
    .where(eq(bandwidthPrices.product, product))
    .get();
}

export function ispAsn(ctx: DomainContext, country: string, asn: number) {
  return ctx.db
    .select()
    .from(ispAsns)
    .where(and(eq(ispAsns.country, country), eq(ispAsns.asn, asn)))
    .get();
}

export interface Tier {
  plan: string;
  gbIncluded: number;
  monthlyPriceMinor: Minor;
}

/** A subscription tier of a product; `enterprise` exists only with an operator-set custom price for the account. */
export async function findTier(
  ctx: DomainContext,
  accountId: string,
  product: BandwidthProduct,
  plan: string,
): Promise<Tier> {
  const row =
    plan === "enterprise"
      ? await ctx.db
          .select()
          .from(customTiers)
          .where(and(eq(customTiers.accountId, accountId), eq(customTiers.product, product)))
          .get()
      : await ctx.db
          .select()
          .from(subscriptionTiers)
          .where(and(eq(subscriptionTiers.product, product), eq(subscriptionTiers.plan, plan)))
          .get();
  if (!row) throw new ApiError("unknown_plan", `There is no ${plan} tier for ${product}.`);
  return { plan, gbIncluded: row.gbIncluded, monthlyPriceMinor: row.monthlyPriceMinor };
}

export function cycleMonths(cycle: Cycle): number {
  return cycle === "annual" ? 12 : 1;
}

/** The price of one cycle: monthly, or 12 × monthly less 10%. */
export function cyclePrice(monthly: Minor, cycle: Cycle): Minor {
  return cycle === "annual" ? Math.round((monthly * 12 * (100 - ANNUAL_DISCOUNT_PERCENT)) / 100) : monthly;
}

/** Share of a period still ahead at `at`, for prorating (0..1). */
export function remainingShare(periodStart: number, periodEnd: number, at: number): number {
  if (periodEnd <= periodStart) return 0;
  return Math.min(1, Math.max(0, (periodEnd - at) / (periodEnd - periodStart)));
}

// ── The catalogue, as operators edit it ───────────────────────────────────────────────────────────

export interface PriceCatalogue {
  bandwidth: Array<{ product: BandwidthProduct; pricePerGbMinor: Minor }>;
  isp: Array<{ country: string; asn: number; carrier: string; premium: boolean; pricePerIpMonthMinor: Minor }>;
  tiers: Array<{ product: BandwidthProduct; plan: string; gbIncluded: number; monthlyPriceMinor: Minor }>;
}

export async function priceCatalogue(ctx: DomainContext): Promise<PriceCatalogue> {
  const [bandwidth, isp, tiers] = await ctx.db.batch([
    ctx.db.select().from(bandwidthPrices).orderBy(bandwidthPrices.product),
    ctx.db.select().from(ispAsns).orderBy(ispAsns.country, ispAsns.asn),
    ctx.db.select().from(subscriptionTiers).orderBy(subscriptionTiers.product, subscriptionTiers.monthlyPriceMinor),
  ]);
  return { bandwidth, isp, tiers };
}

export async function setBandwidthPrice(ctx: DomainContext, product: BandwidthProduct, pricePerGbMinor: Minor) {
  await ctx.db
    .insert(bandwidthPrices)
    .values({ product, pricePerGbMinor })
    .onConflictDoUpdate({ target: bandwidthPrices.product, set: { pricePerGbMinor } });
}

export async function setIspAsnPrice(ctx: DomainContext, asn: PriceCatalogue["isp"][number]) {
  const { country, asn: number, ...values } = asn;
  await ctx.db
    .insert(ispAsns)
    .values(asn)
    .onConflictDoUpdate({ target: [ispAsns.country, ispAsns.asn], set: values });
  return { country, asn: number };
}

export async function setTier(ctx: DomainContext, tier: PriceCatalogue["tiers"][number]) {
  const { product, plan, ...values } = tier;
  await ctx.db
    .insert(subscriptionTiers)
    .values(tier)
    .onConflictDoUpdate({ target: [subscriptionTiers.product, subscriptionTiers.plan], set: values });
  return { product, plan };
}

/** An account's enterprise tier: makes `plan: enterprise` subscribable for that account and product. */
export async function setCustomTier(
  ctx: DomainContext,
  accountId: string,
  tier: { product: BandwidthProduct; gbIncluded: number; monthlyPriceMinor: Minor },
) {
  const { product, ...values } = tier;
  await commitAudited(
    ctx,
    ctx.db
      .insert(customTiers)
      .values({ accountId, ...tier })
      .onConflictDoUpdate({ target: [customTiers.accountId, customTiers.product], set: values }),
    { action: "account.custom_tier_set", accountId, resourceId: accountId, products: [product], after: tier },
  );
  return { accountId, ...tier };
}

import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPrices, type Cycle, customTiers, ispAsns, subscriptionTiers } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import type { Minor } from "../../platform/money";

export type BandwidthProduct = "residential" | "mobile";

/** Annual cycles are priced 10% below twelve monthly cycles (spec §2.6). */
export const ANNUAL_DISCOUNT_PERCENT = 10;

export async function bandwidthPricePerGb(db: Database, product: BandwidthProduct): Promise<Minor> {
  const row = await db.select().from(bandwidthPrices).where(eq(bandwidthPrices.product, product)).get();
  if (!row) throw new ApiError("internal_error", `No price is set for ${product} bandwidth.`);
  return row.pricePerGbMinor;
}

/** GB (up to 3 decimals) × price per GB, rounded up to the cent so no order is free. */
export function bandwidthTotal(gb: number, pricePerGb: Minor): Minor {
  return Math.ceil((Math.round(gb * 1000) * pricePerGb) / 1000);
}

export async function ispAsn(db: Database, country: string, asn: number) {
  return db
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
  db: Database,
  accountId: string,
  product: BandwidthProduct,
  plan: string,
): Promise<Tier> {
  if (plan === "enterprise") {
    const custom = await db
      .select()
      .from(customTiers)
      .where(and(eq(customTiers.accountId, accountId), eq(customTiers.product, product)))
      .get();
    if (custom) return { plan, gbIncluded: custom.gbIncluded, monthlyPriceMinor: custom.monthlyPriceMinor };
  } else {
    const tier = await db
      .select()
      .from(subscriptionTiers)
      .where(and(eq(subscriptionTiers.product, product), eq(subscriptionTiers.plan, plan)))
      .get();
    if (tier) return { plan, gbIncluded: tier.gbIncluded, monthlyPriceMinor: tier.monthlyPriceMinor };
  }
  throw new ApiError("unknown_plan", `There is no ${plan} tier for ${product}.`);
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

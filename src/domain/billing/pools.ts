import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPools } from "../../db/schema";
import type { BandwidthProduct } from "./prices";

export const MB_PER_GB = 1000;

export function gbToMb(gb: number): number {
  return Math.round(gb * MB_PER_GB);
}

/** Adds bandwidth to an account's pool of a product (a statement for the paying batch). */
export function addToPoolStatement(db: Database, accountId: string, product: BandwidthProduct, mb: number) {
  return db
    .insert(bandwidthPools)
    .values({ accountId, product, purchasedMb: mb, usedMb: 0 })
    .onConflictDoUpdate({
      target: [bandwidthPools.accountId, bandwidthPools.product],
      set: { purchasedMb: sql`${bandwidthPools.purchasedMb} + ${mb}` },
    });
}

export async function findPool(db: Database, accountId: string, product: BandwidthProduct) {
  const pool = await db
    .select()
    .from(bandwidthPools)
    .where(and(eq(bandwidthPools.accountId, accountId), eq(bandwidthPools.product, product)))
    .get();
  return pool ?? { accountId, product, purchasedMb: 0, usedMb: 0 };
}

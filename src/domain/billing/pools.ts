import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPools } from "../../db/schema";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";
import type { BandwidthProduct } from "./prices";

export const MB_PER_GB = 1000;

export function gbToMb(gb: number): number {
  return Math.round(gb * MB_PER_GB);
}

export interface Pool {
  accountId: string;
  product: BandwidthProduct;
  purchasedMb: number;
  usedMb: number;
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

export async function findPool(ctx: DomainContext, accountId: string, product: BandwidthProduct): Promise<Pool> {
  const pool = await ctx.db
    .select()
    .from(bandwidthPools)
    .where(and(eq(bandwidthPools.accountId, accountId), eq(bandwidthPools.product, product)))
    .get();
  return pool ?? { accountId, product, purchasedMb: 0, usedMb: 0 };
}

/** The caller's pool of a product, which its key's scope must cover. */
export function bandwidthBalance(ctx: DomainContext, principal: Principal, product: BandwidthProduct): Promise<Pool> {
  assertInScope(principal, [product]);
  return findPool(ctx, principal.accountId, product);
}

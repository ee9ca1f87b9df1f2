import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { afterCommit, type Statement } from "../../db/guarded-batch";
import { bandwidthPools } from "../../db/schema";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";
import { pushPoolFigures } from "../subusers/gate-sync";
import type { BandwidthProduct } from "./prices";

/** Bandwidth is counted in bytes: 1 GB = 10^9 bytes (1 MB = 10^6), as gateways count it. */
export const BYTES_PER_GB = 1_000_000_000;
export const BYTES_PER_MB = 1_000_000;

/** GB with at most 3 decimals (whole MB) as exact bytes. */
export function gbToBytes(gb: number): number {
  return Math.round(gb * 1000) * BYTES_PER_MB;
}

export interface Pool {
  accountId: string;
  product: BandwidthProduct;
  purchasedBytes: number;
  usedBytes: number;
  topUpCount: number;
  exhausted: boolean;
}

/** Adds bandwidth to an account's pool of a product (a statement for the paying batch); a new top-up. */
export function addToPoolStatement(db: Database, accountId: string, product: BandwidthProduct, bytes: number) {
  return watchPool(
    db
      .insert(bandwidthPools)
      .values({ accountId, product, purchasedBytes: bytes, usedBytes: 0, topUpCount: 1, exhausted: true })
      .onConflictDoUpdate({
        target: [bandwidthPools.accountId, bandwidthPools.product],
        set: {
          purchasedBytes: sql`${bandwidthPools.purchasedBytes} + ${bytes}`,
          topUpCount: sql`${bandwidthPools.topUpCount} + 1`,
        },
      })
      .returning(),
  );
}

/** Usage consumes pools: `bytes` per product, in the batch that records the usage message as applied. */
export function consumePoolsStatement(
  db: Database,
  accountId: string,
  usage: Array<{ product: string; bytes: number }>,
) {
  return watchPool(
    db
      .insert(bandwidthPools)
      .select(
        sql`SELECT ${accountId}, json_extract(value, '$.product'), 0, json_extract(value, '$.bytes'), 0, 1
            FROM json_each(${JSON.stringify(usage)}) WHERE true`,
      )
      .onConflictDoUpdate({
        target: [bandwidthPools.accountId, bandwidthPools.product],
        set: { usedBytes: sql`${bandwidthPools.usedBytes} + excluded.used_bytes` },
      })
      .returning(),
  );
}

/**
 * After a pool changed: when it became used up, or has room again, tell the gates of the account's sub-users (a
 * pool that never existed counts as used up). The flag flips in SQL, so concurrent writers push once each flip;
 * gates keep the highest figures they were told, so pushes arriving out of order cannot undo a later one.
 */
function watchPool<S extends Statement>(statement: S) {
  return afterCommit(statement, async (ctx, rows) => {
    for (const pool of rows as Pool[]) {
      const flipped = await ctx.db
        .update(bandwidthPools)
        .set({ exhausted: sql`${bandwidthPools.usedBytes} >= ${bandwidthPools.purchasedBytes}` })
        .where(
          and(
            eq(bandwidthPools.accountId, pool.accountId),
            eq(bandwidthPools.product, pool.product),
            sql`${bandwidthPools.exhausted} <> (${bandwidthPools.usedBytes} >= ${bandwidthPools.purchasedBytes})`,
          ),
        )
        .returning();
      for (const row of flipped) await pushPoolFigures(ctx, row);
    }
  });
}

export async function findPool(ctx: DomainContext, accountId: string, product: BandwidthProduct): Promise<Pool> {
  const pool = await ctx.db
    .select()
    .from(bandwidthPools)
    .where(and(eq(bandwidthPools.accountId, accountId), eq(bandwidthPools.product, product)))
    .get();
  return pool ?? { accountId, product, purchasedBytes: 0, usedBytes: 0, topUpCount: 0, exhausted: false };
}

/** The caller's pool of a product, which its key's scope must cover. */
export function bandwidthBalance(ctx: DomainContext, principal: Principal, product: BandwidthProduct): Promise<Pool> {
  assertInScope(principal, [product]);
  return findPool(ctx, principal.accountId, product);
}

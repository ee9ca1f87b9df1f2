import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { afterCommit, type Statement } from "../../db/guarded-batch";
import { bandwidthPools, poolFlipDue, poolGatesBehind } from "../../db/schema";
import { logError } from "../../platform/logger";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";
import { pushPoolFigures } from "../subusers/gate-sync";
import { accountStore } from "../traffic/store";
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
  flips: number;
  flipsTold: number;
}

/**
 * Adds bandwidth to an account's pool of a product (a statement for the paying batch); a new top-up. Once it
 * commits, the gates hear whether the pool has room again, and the account's usage meter its new size.
 */
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
    async (ctx, pools) => {
      // Pools carry no settlement of their own: a top-up only makes the meter's next one judge by the new size.
      await accountStore(ctx, accountId).learnFigures({
        pools: pools.map(({ product, purchasedBytes, usedBytes, topUpCount }) => ({
          product,
          purchasedBytes,
          usedBytes,
          topUpCount,
        })),
      });
    },
  );
}

/** Usage consumes pools: `bytes` per product, in the batch that settles metered usage. */
export function consumePoolsStatement(
  db: Database,
  accountId: string,
  usage: Array<{ product: string; bytes: number }>,
) {
  return watchPool(
    db
      .insert(bandwidthPools)
      .select(
        sql`SELECT ${accountId}, json_extract(value, '$.product'), 0, json_extract(value, '$.bytes'), 0, 1, 0, 0
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
 * gates keep the highest figures they were told, so pushes arriving out of order cannot undo a later one. A push
 * that fails leaves its flip unconfirmed, and the cron tells the gates again (`retellPoolGates`).
 */
function watchPool<S extends Statement>(
  statement: S,
  then: (ctx: DomainContext, pools: Pool[]) => Promise<void> = async () => {},
) {
  return afterCommit(statement, async (ctx, rows) => {
    for (const pool of rows as Pool[]) await flipAndTell(ctx, pool);
    await then(ctx, rows as Pool[]);
  });
}

async function flipAndTell(ctx: DomainContext, pool: { accountId: string; product: BandwidthProduct }): Promise<void> {
  const [flipped] = await ctx.db
    .update(bandwidthPools)
    .set({
      exhausted: sql`${bandwidthPools.usedBytes} >= ${bandwidthPools.purchasedBytes}`,
      flips: sql`${bandwidthPools.flips} + 1`,
    })
    .where(and(poolIs(pool), poolFlipDue(bandwidthPools)))
    .returning();
  if (flipped) await tellGates(ctx, flipped);
}

/** Pushes the pool's figures to its gates and confirms the flip they reflect; a failure is left to the cron. */
async function tellGates(ctx: DomainContext, pool: Pool): Promise<void> {
  try {
    await pushPoolFigures(ctx, pool);
  } catch (error) {
    logError("pool_gates_not_told", { accountId: pool.accountId, product: pool.product, flip: pool.flips }, error);
    return;
  }
  await ctx.db
    .update(bandwidthPools)
    .set({ flipsTold: sql`max(${bandwidthPools.flipsTold}, ${pool.flips})` })
    .where(poolIs(pool));
}

/**
 * The cron's repair: pools whose gates may not know their state (a push failed, or the worker stopped between
 * the write and its hook) are flipped if due and their current figures told again. Returns how many it found.
 */
export async function retellPoolGates(ctx: DomainContext): Promise<number> {
  const behind = await ctx.db.select().from(bandwidthPools).where(poolGatesBehind(bandwidthPools)).limit(100);
  for (const pool of behind) {
    if (pool.exhausted !== pool.usedBytes >= pool.purchasedBytes) await flipAndTell(ctx, pool);
    else await tellGates(ctx, pool);
  }
  return behind.length;
}

function poolIs(pool: { accountId: string; product: string }) {
  return and(
    eq(bandwidthPools.accountId, pool.accountId),
    eq(bandwidthPools.product, pool.product as BandwidthProduct),
  );
}

export async function findPool(ctx: DomainContext, accountId: string, product: BandwidthProduct): Promise<Pool> {
  const pool = await ctx.db.select().from(bandwidthPools).where(poolIs({ accountId, product })).get();
  return (
    pool ?? {
      accountId,
      product,
      purchasedBytes: 0,
      usedBytes: 0,
      topUpCount: 0,
      exhausted: false,
      flips: 0,
      flipsTold: 0,
    }
  );
}

/** The caller's pool of a product, which its key's scope must cover. */
export function bandwidthBalance(ctx: DomainContext, principal: Principal, product: BandwidthProduct): Promise<Pool> {
  assertInScope(principal, [product]);
  return findPool(ctx, principal.accountId, product);
}

import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPools, poolFlipDue, poolGatesBehind } from "../../db/schema";
import type { Statement } from "../../db/statements";
import { logError } from "../../platform/logger";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";
import { pushPoolFigures } from "../subusers/gate-sync";
import { accountStores } from "../traffic/store";
import { Write } from "../unit-of-work";
import type { BandwidthProduct } from "./prices";

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
 * Adds bandwidth to an account's pool of a product (a write for the paying batch); a new top-up. A pool that had
 * run out flips to having room in the same statement (a new pool too: one that never existed counts as used up).
 * Once it commits, the gates and the account's usage meter hear of a flip.
 */
export function addToPool(db: Database, accountId: string, product: BandwidthProduct, bytes: number) {
  const purchased = sql`${bandwidthPools.purchasedBytes} + ${bytes}`;
  return poolWrite(
    db
      .insert(bandwidthPools)
      .values({ accountId, product, purchasedBytes: bytes, usedBytes: 0, topUpCount: 1, ...newPoolFlag(bytes) })
      .onConflictDoUpdate({
        target: [bandwidthPools.accountId, bandwidthPools.product],
        set: {
          purchasedBytes: purchased,
          topUpCount: sql`${bandwidthPools.topUpCount} + 1`,
          ...flipTo(sql`${bandwidthPools.usedBytes} >= ${purchased}`),
        },
      })
      .returning(),
    async (ctx, pools) => {
      // The meter learns a pool's new size with its next settlement (within a minute): until then a size it has not
      // heard of can only make it settle early. A pool that had run out tells it at once, as it tells the gates.
      const reopened = pools.filter((pool) => pool.flipsTold < pool.flips);
      if (reopened.length === 0) return;
      await (await accountStores(ctx, accountId)).learnFigures({
        pools: reopened.map(({ product, purchasedBytes, usedBytes, topUpCount }) => ({
          product,
          purchasedBytes,
          usedBytes,
          topUpCount,
        })),
      });
    },
  );
}

/** Usage consumes pools: `bytes` per product, in the batch that settles metered usage; a pool may run out. */
export function consumePools(db: Database, accountId: string, usage: Array<{ product: string; bytes: number }>) {
  const used = sql`${bandwidthPools.usedBytes} + excluded.used_bytes`;
  return poolWrite(
    db
      .insert(bandwidthPools)
      .select(
        sql`SELECT ${accountId}, json_extract(value, '$.product'), 0, json_extract(value, '$.bytes'), 0, 1, 0, 0
            FROM json_each(${JSON.stringify(usage)}) WHERE true`,
      )
      .onConflictDoUpdate({
        target: [bandwidthPools.accountId, bandwidthPools.product],
        set: { usedBytes: used, ...flipTo(sql`${used} >= ${bandwidthPools.purchasedBytes}`) },
      })
      .returning(),
  );
}

/** A new pool's flag: it has room unless it was bought empty, and having room is a flip from never having existed. */
function newPoolFlag(bytes: number) {
  return { exhausted: bytes <= 0, flips: bytes > 0 ? 1 : 0 };
}

/** An upsert's `SET` for the `exhausted` flag becoming `exhausted`: a change is a flip, and counts. */
function flipTo(exhausted: SQL) {
  return {
    exhausted: sql`${exhausted}`,
    flips: sql`${bandwidthPools.flips} + (${bandwidthPools.exhausted} <> (${exhausted}))`,
  };
}

/**
 * A pool upsert and its effect: when it flipped the pool (used up, or room again), the gates of the account's
 * sub-users are told. Concurrent writers each see their own flip (D1 runs them one after the other) and push
 * once each; gates keep the highest figures they were told, so pushes arriving out of order cannot undo a later
 * one. A push that fails leaves its flip unconfirmed, and the cron tells the gates again (`retellPoolGates`).
 */
function poolWrite<S extends Statement>(
  statement: S,
  then: (ctx: DomainContext, pools: Pool[]) => Promise<void> = async () => {},
) {
  return new Write(statement, {
    afterCommit: async (ctx, rows) => {
      for (const pool of rows as Pool[]) if (pool.flipsTold < pool.flips) await tellGates(ctx, pool);
      await then(ctx, rows as Pool[]);
    },
  });
}

/** The cron's repair of a pool whose flag differs from its figures (written before flips were made in the upsert). */
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

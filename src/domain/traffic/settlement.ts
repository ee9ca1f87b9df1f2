import { and, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { subuserMonthlyUsage, subusers, usageSettlements } from "../../db/schema";
import { abortIf } from "../../db/statements";
import type { MeterFigures, Settlement } from "../../durable-objects/traffic-store/contract";
import { now } from "../../platform/clock";
import { consumePools, type Pool } from "../billing/pools";
import type { DomainContext } from "../context";
import { poolThresholdEvents, subuserThresholdEvents } from "../events";
import { settleCapUsageStatements } from "../subusers/cap-usage";
import { type Committed, runUnitOfWork, type Step } from "../unit-of-work";
import { accountStore, meteredSubuser, poolsQuery } from "./store";

/**
 * Usage is metered in each account's traffic store (`src/durable-objects/traffic-store/usage-meter.ts`) and settled to
 * D1 from there: pools' `used_bytes`, capped sub-users' usage per cap period (month, day, lifetime),
 * `traffic.threshold` events and the gates' flips. D1's
 * figures are therefore those of the account's last settlement — at most 5 minutes behind what the store metered, and at
 * once when a pool or cap passes 80% or 100%.
 */

/**
 * Hands one store's settlements to D1 until none is due: each is applied once (numbered per store: a number D1 has
 * seen for the account's shard is not applied again), then confirmed to the store with D1's figures after it.
 */
export async function settleUsage(
  ctx: DomainContext,
  accountId: string,
  shard: number,
  first: Settlement | null,
): Promise<void> {
  const store = accountStore(ctx, accountId, shard);
  for (let settlement = first; settlement; ) {
    const figures = await applySettlement(ctx, accountId, shard, settlement);
    settlement = await store.confirmSettlement(settlement.seq, figures);
  }
}

/**
 * One D1 batch: the settlement's number (the batch rolls back if D1 has it already), the bytes added to the pools
 * and capped sub-users' period figures, the threshold events they pass (once each, by their dedupe keys) and, after
 * the commit, the gates told of a pool that ran out or has room again and of caps reached. Returns D1's figures.
 */
async function applySettlement(
  ctx: DomainContext,
  accountId: string,
  shard: number,
  settlement: Settlement,
): Promise<MeterFigures> {
  const batch = settlementBatch(ctx.db, { accountId, shard }, settlement, now());
  const outcome = await runUnitOfWork(ctx, batch.steps);
  if (outcome.committed) return batch.figures(outcome);
  if (outcome.failure !== "state")
    throw new Error(`Usage settlement ${settlement.seq} rolled back: ${outcome.failure}`);
  // Applied before (a retry, or a racing consumer): D1's figures as they are.
  const reads = periodQueries(ctx.db, accountId, settlement.months);
  if (!reads) return { pools: await poolsQuery(ctx.db, accountId), subusers: [], months: [] };
  const [pools, owners, months] = await ctx.db.batch([poolsQuery(ctx.db, accountId), reads.owners, reads.months]);
  return { pools, subusers: owners, months };
}

/**
 * The statements of a settlement's D1 batch, and how D1's figures are read from their results: the pools from
 * the pools' own upsert (`RETURNING`), capped sub-users and their periods' figures from two reads when the
 * settlement has periods. Four statements for a settlement of pools alone.
 */
export function settlementBatch(
  db: Database,
  { accountId, shard }: { accountId: string; shard: number },
  settlement: Settlement,
  at: number,
) {
  const pools = settlement.pools.filter((pool) => pool.bytes > 0);
  const months = settlement.months;
  const steps: Step[] = [
    abortIf(
      db,
      "state",
      sql`EXISTS (SELECT 1 FROM ${usageSettlements} WHERE ${usageSettlements.accountId} = ${accountId}
            AND ${usageSettlements.shard} = ${shard} AND ${usageSettlements.seq} >= ${settlement.seq})`,
    ),
    db
      .insert(usageSettlements)
      .values({ accountId, shard, seq: settlement.seq, settledAt: at })
      .onConflictDoUpdate({
        target: [usageSettlements.accountId, usageSettlements.shard],
        set: { seq: settlement.seq, settledAt: at },
      }),
  ];
  const consumed = pools.length > 0 ? consumePools(db, accountId, pools) : null;
  if (consumed) steps.push(consumed, poolThresholdEvents(db, accountId, pools, at));
  const reads = periodQueries(db, accountId, months);
  if (reads) {
    steps.push(...settleCapUsageStatements(db, months, at), subuserThresholdEvents(db, months, at));
    steps.push(reads.owners, reads.months);
  }
  const figures = (committed: Committed): MeterFigures => ({
    pools: (consumed ? (committed.of(consumed) as Pool[]) : []).map(
      ({ product, purchasedBytes, usedBytes, topUpCount }) => ({ product, purchasedBytes, usedBytes, topUpCount }),
    ),
    subusers: reads ? committed.of(reads.owners) : [],
    months: reads ? committed.of(reads.months) : [],
  });
  return { steps, figures };
}

/** The settled sub-users' caps and deletions, and their periods' figures. */
function periodQueries(db: Database, accountId: string, months: Settlement["months"]) {
  if (months.length === 0) return null;
  const subuserIds = [...new Set(months.map((month) => month.subuserId))];
  const keys = JSON.stringify(months.map((month) => [month.subuserId, month.month]));
  return {
    owners: db
      .select(meteredSubuser)
      .from(subusers)
      .where(and(eq(subusers.accountId, accountId), inArray(subusers.id, subuserIds))),
    months: db
      .select({
        subuserId: subuserMonthlyUsage.subuserId,
        month: subuserMonthlyUsage.month,
        usedBytes: subuserMonthlyUsage.usedBytes,
      })
      .from(subuserMonthlyUsage)
      .where(
        sql`(${subuserMonthlyUsage.subuserId}, ${subuserMonthlyUsage.month}) IN
              (SELECT value->>0, value->>1 FROM json_each(${keys}))`,
      ),
  };
}

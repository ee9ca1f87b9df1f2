import { and, eq, inArray, sql } from "drizzle-orm";
import type { MeterFigures, Settlement } from "../../../durable-objects/traffic-types";
import { abortIf, runGuardedBatch, type Statement } from "../../db/guarded-batch";
import { subuserMonthlyUsage, subusers, usageSettlements } from "../../db/schema";
import { now } from "../../platform/clock";
import { consumePoolsStatement } from "../billing/pools";
import type { DomainContext } from "../context";
import { poolThresholdEvents, subuserThresholdEvents } from "../events";
import { addMonthlyUsageStatements } from "../subusers/monthly-usage";
import { accountStore, poolsQuery } from "./store";

/**
 * Usage is metered in each account's traffic store (`durable-objects/usage-meter.ts`) and settled to D1 from
 * there: pools' `used_bytes`, sub-users' monthly usage, `traffic.threshold` events and the gates' flips. D1's
 * figures are therefore those of the account's last settlement — at most a minute behind what the store metered,
 * and at once when a pool or cap passes 80% or 100%.
 */

/**
 * Hands settlements to D1 until none is due: each is applied once (numbered; a number D1 has seen is not applied
 * again), then confirmed to the store with D1's figures after it.
 */
export async function settleUsage(ctx: DomainContext, accountId: string, first: Settlement | null): Promise<void> {
  const store = accountStore(ctx, accountId);
  for (let settlement = first; settlement; ) {
    const figures = await applySettlement(ctx, accountId, settlement);
    settlement = await store.confirmSettlement(settlement.seq, figures);
  }
}

/**
 * One D1 batch: the settlement's number (the batch rolls back if D1 has it already), the bytes added to the pools
 * and the sub-users' months, the threshold events they pass (once each, by their dedupe keys) and, after the
 * commit, the gates told of a pool that ran out or has room again and of caps reached. Returns D1's figures.
 */
async function applySettlement(ctx: DomainContext, accountId: string, settlement: Settlement): Promise<MeterFigures> {
  const at = now();
  const pools = settlement.pools.filter((pool) => pool.bytes > 0);
  const months = settlement.months.filter((month) => month.bytes > 0);
  const statements: Statement[] = [
    abortIf(
      ctx.db,
      "state",
      sql`EXISTS (SELECT 1 FROM ${usageSettlements} WHERE ${usageSettlements.accountId} = ${accountId}
            AND ${usageSettlements.seq} >= ${settlement.seq})`,
    ),
    ctx.db
      .insert(usageSettlements)
      .values({ accountId, seq: settlement.seq, settledAt: at })
      .onConflictDoUpdate({ target: usageSettlements.accountId, set: { seq: settlement.seq, settledAt: at } }),
  ];
  if (pools.length > 0) {
    statements.push(consumePoolsStatement(ctx.db, accountId, pools));
    statements.push(poolThresholdEvents(ctx.db, accountId, pools, at));
  }
  if (months.length > 0) {
    statements.push(...addMonthlyUsageStatements(ctx.db, months));
    statements.push(subuserThresholdEvents(ctx.db, months, at));
  }
  const figures = figureQueries(ctx, accountId, months);
  const outcome = await runGuardedBatch(ctx, [...statements, ...figures]);
  if (outcome.committed) return figuresOf(outcome.results.slice(statements.length));
  if (outcome.failure !== "state")
    throw new Error(`Usage settlement ${settlement.seq} rolled back: ${outcome.failure}`);
  // Applied before (a retry, or a racing consumer): D1's figures as they are.
  return figuresOf(await ctx.db.batch([...figureQueries(ctx, accountId, months)]));
}

/** D1's figures after a settlement: the pools, and the settled sub-users with their months. */
function figureQueries(ctx: DomainContext, accountId: string, months: Settlement["months"]) {
  const subuserIds = [...new Set(months.map((month) => month.subuserId))];
  const keys = JSON.stringify(months.map((month) => [month.subuserId, month.month]));
  return [
    poolsQuery(ctx, accountId),
    ctx.db
      .select({ subuserId: subusers.id, capBytes: subusers.trafficLimitBytes, deletedAt: subusers.deletedAt })
      .from(subusers)
      .where(and(eq(subusers.accountId, accountId), inArray(subusers.id, subuserIds))),
    ctx.db
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
  ] as const;
}

function figuresOf(results: unknown[]): MeterFigures {
  const [pools, owned, months] = results as [MeterFigures["pools"], MeterFigures["subusers"], MeterFigures["months"]];
  return { pools, subusers: owned, months };
}

import { and, eq, inArray, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { subuserMonthlyUsage, subusers } from "../../db/schema";
import type { PeriodUsage } from "../../durable-objects/traffic-store/contract";
import { oldestDayKept } from "../../platform/cap-periods";
import type { DomainContext } from "../context";
import { capOfPeriod } from "../events";
import { accountStores } from "../traffic/store";
import { Write } from "../unit-of-work";
import { subuserGate } from "./gate-sync";

/**
 * Capped sub-users' figures per cap period — UTC month, UTC day, lifetime — as their account's store metered them
 * (statements for the batch that settles usage): figures only grow, so D1 keeps the higher of its own and the
 * settled one, and settling the same figure twice changes nothing. The batch then reads which of them are at or
 * over their period's cap as it stands now — a cap may have been lowered while the usage was queued — and their
 * gates hear the period's figure, so they refuse new requests with 402 (`traffic-limit-reached`,
 * `daily-limit-reached`, `lifetime-limit-reached`) until the period ends or the cap is raised. Gates keep the
 * highest figure they were told, so repeated pushes are harmless. The settled sub-users' days older than
 * `DAYS_KEPT` are deleted with it (their caps refuse nothing any more).
 */
export function settleCapUsageStatements(
  db: Database,
  usage: Array<{ subuserId: string; month: string; usedBytes: number }>,
  at: number,
) {
  const entries = JSON.stringify(usage);
  const upsert = db
    .insert(subuserMonthlyUsage)
    .select(sql`SELECT value->>'subuserId', value->>'month', value->>'usedBytes' FROM json_each(${entries}) WHERE true`)
    .onConflictDoUpdate({
      target: [subuserMonthlyUsage.subuserId, subuserMonthlyUsage.month],
      set: { usedBytes: sql`max(${subuserMonthlyUsage.usedBytes}, excluded.used_bytes)` },
    });
  const overCap = db
    .select({ gateName: subusers.name, month: subuserMonthlyUsage.month, usedBytes: subuserMonthlyUsage.usedBytes })
    .from(subuserMonthlyUsage)
    .innerJoin(subusers, eq(subusers.id, subuserMonthlyUsage.subuserId))
    .where(
      and(
        sql`(${subuserMonthlyUsage.subuserId}, ${subuserMonthlyUsage.month}) IN
          (SELECT value->>'subuserId', value->>'month' FROM json_each(${entries}))`,
        sql`${subuserMonthlyUsage.usedBytes} >= ${capOfPeriod(sql`${subuserMonthlyUsage.month}`)}`,
      ),
    );
  const tellGates = new Write(overCap, {
    afterCommit: async (ctx, rows) => {
      for (const row of rows) await subuserGate(ctx, row.gateName).updateUsage(row.month, row.usedBytes);
    },
  });
  const pastDays = db
    .delete(subuserMonthlyUsage)
    .where(
      and(
        inArray(subuserMonthlyUsage.subuserId, [...new Set(usage.map((entry) => entry.subuserId))]),
        sql`length(${subuserMonthlyUsage.month}) = 10`,
        lt(subuserMonthlyUsage.month, oldestDayKept(at)),
      ),
    );
  return [upsert, tellGates, pastDays];
}

/**
 * Sub-users' usage of the current UTC month, the current UTC day and their lifetime, in bytes, from their account's
 * traffic stores (exact and live, capped or not; D1 keeps the figures of capped sub-users only, as last settled).
 */
export async function periodUsageOf(
  ctx: DomainContext,
  accountId: string,
  subuserIds: string[],
): Promise<Map<string, PeriodUsage>> {
  if (subuserIds.length === 0) return new Map();
  return new Map(Object.entries(await (await accountStores(ctx, accountId)).periodUsage(subuserIds)));
}

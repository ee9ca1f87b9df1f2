import { and, eq, gte, isNotNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { subuserMonthlyUsage, subusers } from "../../db/schema";
import type { DomainContext } from "../context";
import { accountStores } from "../traffic/store";
import { Write } from "../unit-of-work";
import { subuserGate } from "./gate-sync";

/**
 * Capped sub-users' monthly (UTC) figures, as their account's store metered them (statements for the batch that
 * settles usage): figures only grow, so D1 keeps the higher of its own and the settled one, and settling the same
 * figure twice changes nothing. The batch then reads which of them are at or over their cap as it stands now — a
 * cap may have been lowered while the usage was queued — and their gates hear the month's figure, so they refuse
 * new requests with 402 `traffic-limit-reached` until the month ends or the cap is raised. Gates keep the highest
 * figure they were told, so repeated pushes are harmless.
 */
export function settleMonthlyUsageStatements(
  db: Database,
  usage: Array<{ subuserId: string; month: string; usedBytes: number }>,
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
        isNotNull(subusers.trafficLimitBytes),
        gte(subuserMonthlyUsage.usedBytes, subusers.trafficLimitBytes),
      ),
    );
  const tellGates = new Write(overCap, {
    afterCommit: async (ctx, rows) => {
      for (const row of rows) await subuserGate(ctx, row.gateName).updateUsage(row.month, row.usedBytes);
    },
  });
  return [upsert, tellGates];
}

/**
 * Sub-users' usage of the current UTC month, in bytes, from their account's traffic store (exact and live, capped
 * or not; D1 keeps the months of capped sub-users only, as last settled).
 */
export async function monthUsageOf(
  ctx: DomainContext,
  accountId: string,
  subuserIds: string[],
): Promise<Map<string, number>> {
  if (subuserIds.length === 0) return new Map();
  return new Map(Object.entries(await (await accountStores(ctx, accountId)).monthUsage(subuserIds)));
}

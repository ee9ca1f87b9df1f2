import { and, eq, gte, isNotNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { afterCommit } from "../../db/guarded-batch";
import { subuserMonthlyUsage, subusers } from "../../db/schema";
import { now, utcMonth } from "../../platform/clock";
import type { DomainContext } from "../context";
import { subuserGate } from "./gate-sync";

/**
 * Adds usage to sub-users' monthly (UTC) totals (statements for the batch that applies a usage message). The
 * batch then reads which of them are at or over their cap as it stands now — a cap may have been lowered while
 * the usage was queued — and their gates hear the month's figure, so they refuse new requests with 402
 * `traffic-limit-reached` until the month ends or the cap is raised. Gates keep the highest figure they were told,
 * so repeated pushes are harmless.
 */
export function addMonthlyUsageStatements(
  db: Database,
  usage: Array<{ subuserId: string; month: string; bytes: number }>,
) {
  const entries = JSON.stringify(usage);
  const upsert = db
    .insert(subuserMonthlyUsage)
    .select(sql`SELECT value->>'subuserId', value->>'month', value->>'bytes' FROM json_each(${entries}) WHERE true`)
    .onConflictDoUpdate({
      target: [subuserMonthlyUsage.subuserId, subuserMonthlyUsage.month],
      set: { usedBytes: sql`${subuserMonthlyUsage.usedBytes} + excluded.used_bytes` },
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
  const tellGates = afterCommit(overCap, async (ctx, rows) => {
    for (const row of rows) await subuserGate(ctx, row.gateName).updateMonthUsage(row.month, row.usedBytes);
  });
  return [upsert, tellGates];
}

/** Sub-users' usage of the current UTC month, in bytes. */
export async function monthUsageOf(ctx: DomainContext, subuserIds: string[]): Promise<Map<string, number>> {
  if (subuserIds.length === 0) return new Map();
  const rows = await ctx.db
    .select({ subuserId: subuserMonthlyUsage.subuserId, usedBytes: subuserMonthlyUsage.usedBytes })
    .from(subuserMonthlyUsage)
    .where(
      and(
        eq(subuserMonthlyUsage.month, utcMonth(now())),
        sql`${subuserMonthlyUsage.subuserId} IN (SELECT value FROM json_each(${JSON.stringify(subuserIds)}))`,
      ),
    );
  return new Map(rows.map((row) => [row.subuserId, row.usedBytes]));
}

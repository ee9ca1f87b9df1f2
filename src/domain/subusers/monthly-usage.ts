import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { afterCommit } from "../../db/guarded-batch";
import { subuserMonthlyUsage } from "../../db/schema";
import { now, utcMonth } from "../../platform/clock";
import type { DomainContext } from "../context";
import type { SubuserRef } from "../traffic/usage-messages";
import { subuserGate } from "./gate-sync";

/**
 * Adds usage to sub-users' monthly (UTC) totals. When a total crosses the sub-user's cap, its gate hears of it
 * at once and refuses new requests with 402 `traffic-limit-reached` until the month ends or the cap is raised.
 */
export function addMonthlyUsageStatement(
  db: Database,
  usage: Array<{ subuserId: string; month: string; bytes: number }>,
  subusers: SubuserRef[],
) {
  const statement = db
    .insert(subuserMonthlyUsage)
    .select(
      sql`SELECT value->>'subuserId', value->>'month', value->>'bytes' FROM json_each(${JSON.stringify(usage)}) WHERE true`,
    )
    .onConflictDoUpdate({
      target: [subuserMonthlyUsage.subuserId, subuserMonthlyUsage.month],
      set: { usedBytes: sql`${subuserMonthlyUsage.usedBytes} + excluded.used_bytes` },
    })
    .returning();
  return afterCommit(statement, async (ctx, rows) => {
    for (const row of rows) {
      const ref = subusers.find((subuser) => subuser.id === row.subuserId);
      const added = usage.find((entry) => entry.subuserId === row.subuserId && entry.month === row.month)?.bytes ?? 0;
      const limit = ref?.limitBytes ?? null;
      if (ref && limit !== null && row.usedBytes >= limit && row.usedBytes - added < limit) {
        await subuserGate(ctx, ref.gateName).updateMonthUsage(row.month, row.usedBytes);
      }
    }
  });
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

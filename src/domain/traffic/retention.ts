import { sql } from "drizzle-orm";
import { usageApplied, usageBatches } from "../../db/schema";
import { DAY } from "../../platform/clock";
import type { DomainContext } from "../context";

/**
 * How long D1 remembers usage batches and applied messages: longer than the gateway retries a batch and than the
 * queue redelivers a message (its retries with backoff end within minutes; 7 days leaves room for a long outage).
 */
export const USAGE_DEDUPE_KEPT_MS = 7 * DAY;
/** Rows deleted per statement, so one run never holds D1 for long; the next minute's run takes the rest. */
const PRUNE_LIMIT = 5_000;

/** Forgets usage batches and applied messages past the dedupe horizon. Returns how many rows went. */
export async function pruneUsageDedupe(ctx: DomainContext, at: number): Promise<number> {
  const cutoff = at - USAGE_DEDUPE_KEPT_MS;
  const [batches, applied] = await ctx.db.batch([
    ctx.db
      .delete(usageBatches)
      .where(
        sql`${usageBatches.id} IN (SELECT id FROM usage_batches WHERE received_at < ${cutoff} LIMIT ${PRUNE_LIMIT})`,
      ),
    ctx.db
      .delete(usageApplied)
      .where(
        sql`${usageApplied.messageKey} IN (SELECT message_key FROM usage_applied WHERE applied_at < ${cutoff} LIMIT ${PRUNE_LIMIT})`,
      ),
  ]);
  return batches.meta.changes + applied.meta.changes;
}

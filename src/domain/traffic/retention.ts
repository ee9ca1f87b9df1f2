import { sql } from "drizzle-orm";
import { usageBatches } from "../../db/schema";
import { DAY } from "../../platform/clock";
import type { DomainContext } from "../context";

/**
 * How long D1 remembers usage batches: longer than the gateway retries a batch (7 days leaves room for a long
 * outage).
 */
export const USAGE_DEDUPE_KEPT_MS = 7 * DAY;
/** Rows deleted per statement, so one run never holds D1 for long; the next minute's run takes the rest. */
const PRUNE_LIMIT = 5_000;

/** Forgets usage batches past the dedupe horizon. Returns how many rows went. */
export async function pruneUsageDedupe(ctx: DomainContext, at: number): Promise<number> {
  const cutoff = at - USAGE_DEDUPE_KEPT_MS;
  const batches = await ctx.db
    .delete(usageBatches)
    .where(
      sql`${usageBatches.id} IN (SELECT id FROM usage_batches WHERE received_at < ${cutoff} LIMIT ${PRUNE_LIMIT})`,
    );
  return batches.meta.changes;
}

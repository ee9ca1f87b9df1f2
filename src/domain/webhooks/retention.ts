import { and, inArray, lt } from "drizzle-orm";
import { webhookDeliveries } from "../../db/schema";
import { DAY } from "../../platform/clock";
import { firstIdAt } from "../../platform/ids";
import type { DomainContext } from "../context";

/** The delivery log keeps 30 days, like the event list (a delivery's schedule ends 24 hours after it starts). */
export const DELIVERY_RETENTION_MS = 30 * DAY;
const PRUNE_CHUNK = 1000;

/**
 * Deletes deliveries older than the retention, oldest first, a chunk per run: the id range (ids sort by creation
 * time) keeps it an index scan, `created_at` decides.
 */
export async function pruneDeliveries(ctx: DomainContext, at: number): Promise<number> {
  const cutoff = at - DELIVERY_RETENTION_MS;
  const old = ctx.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(and(lt(webhookDeliveries.id, firstIdAt("webhookDelivery", cutoff)), lt(webhookDeliveries.createdAt, cutoff)))
    .orderBy(webhookDeliveries.id)
    .limit(PRUNE_CHUNK);
  const deleted = await ctx.db
    .delete(webhookDeliveries)
    .where(inArray(webhookDeliveries.id, old))
    .returning({ id: webhookDeliveries.id });
  return deleted.length;
}

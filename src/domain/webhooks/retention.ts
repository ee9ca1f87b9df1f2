import { webhookDeliveries } from "../../db/schema";
import { pruneMadeBefore } from "../../db/statements";
import { DAY } from "../../platform/clock";
import type { DomainContext } from "../context";

/** The delivery log keeps 30 days, like the event list (a delivery's schedule ends 24 hours after it starts). */
export const DELIVERY_RETENTION_MS = 30 * DAY;

/** Deletes deliveries older than the retention, oldest first, a chunk per run. */
export function pruneDeliveries(ctx: DomainContext, at: number): Promise<number> {
  return pruneMadeBefore(ctx.db, webhookDeliveries, "webhookDelivery", at - DELIVERY_RETENTION_MS);
}

import type { SQL } from "drizzle-orm";
import type { Database } from "../db/client";
import { events } from "../db/schema";
import { newId } from "../platform/ids";

/** Stable event type names (spec §6 categories), ready for webhook delivery. */
export const eventTypes = {
  orderCompleted: "order.completed",
  batchExpiring: "isp_batch.expiring",
  trafficThreshold: "traffic.threshold",
} as const;

/**
 * Records an event once per `dedupeKey` (a job that runs twice records nothing twice).
 * Returns a statement, to run in the batch that makes the event true.
 */
export function eventStatement(
  db: Database,
  event: { accountId: string; type: string; payload: Record<string, unknown> | SQL; dedupeKey: string; at: number },
) {
  return db
    .insert(events)
    .values({
      id: newId("event", event.at),
      accountId: event.accountId,
      type: event.type,
      payload: event.payload,
      dedupeKey: event.dedupeKey,
      createdAt: event.at,
    })
    .onConflictDoNothing({ target: events.dedupeKey });
}

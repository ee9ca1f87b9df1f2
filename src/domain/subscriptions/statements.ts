import { and, eq, inArray } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type SubscriptionRow, subscriptions } from "../../db/schema";
import { type Statement, unchangedSince } from "../../db/statements";

/** Statements on the subscriptions table, for batches that other areas compose (ISP renewals, releases). */

/** Statuses of a subscription that still counts: only `cancelled` (archived) frees its product and plan. */
export const LIVE_STATUSES = ["active", "paused", "cancelling", "past_due"] as const;

export function subscriptionUnchanged(db: Database, subscription: SubscriptionRow): Statement {
  return unchangedSince(db, subscriptions, subscription);
}

export function insertSubscriptionStatement(db: Database, subscription: SubscriptionRow): Statement {
  return db.insert(subscriptions).values(subscription);
}

export function updateSubscriptionStatement(
  db: Database,
  subscriptionId: string,
  changes: Partial<SubscriptionRow>,
): Statement {
  return db.update(subscriptions).set(changes).where(eq(subscriptions.id, subscriptionId));
}

/** An ISP subscription follows its batch's period when the batch is renewed. */
export function followBatchPeriodStatement(
  db: Database,
  batchId: string,
  period: { periodStart: number; expiresAt: number },
  at: number,
): Statement {
  return db
    .update(subscriptions)
    .set({
      periodStart: period.periodStart,
      renewsAt: period.expiresAt,
      status: "active",
      pastDueSince: null,
      updatedAt: at,
    })
    .where(and(eq(subscriptions.batchId, batchId), inArray(subscriptions.status, ["active", "past_due"])));
}

/** The batch expired unpaid: its subscription is past due. */
export function batchPastDueStatement(db: Database, batchId: string, at: number): Statement {
  return db
    .update(subscriptions)
    .set({ status: "past_due", pastDueSince: at, updatedAt: at })
    .where(and(eq(subscriptions.batchId, batchId), eq(subscriptions.status, "active")));
}

/** The batch was released: its subscription ends and is archived. */
export function endBatchSubscriptionStatement(db: Database, batchId: string, at: number): Statement {
  return db
    .update(subscriptions)
    .set({ status: "cancelled", archivedAt: at, updatedAt: at })
    .where(and(eq(subscriptions.batchId, batchId), inArray(subscriptions.status, LIVE_STATUSES)));
}

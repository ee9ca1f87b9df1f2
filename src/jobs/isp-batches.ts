import { and, eq, inArray, lte, sql } from "drizzle-orm";
import { type BatchRow, ispBatches, ispIps, orders, type SubscriptionRow, subscriptions } from "../db/schema";
import { accountChanged } from "../domain/accounts/account-cache";
import { abortIf, runGuardedBatch, type Statement } from "../domain/billing/ledger";
import { cycleMonths, cyclePrice } from "../domain/billing/prices";
import type { DomainContext } from "../domain/context";
import { eventStatement, eventTypes } from "../domain/events";
import { conflict, GRACE_PERIOD_MS, releaseStatements, renewalStatements } from "../domain/isp/batches";
import { shrinkBatchStatements } from "../domain/subscriptions/subscriptions";
import { DAY } from "../platform/clock";
import { ApiError } from "../platform/errors";
import { fromMinor } from "../platform/money";

/** Days before expiry at which an `isp_batch.expiring` event is recorded (reference facts). */
export const EXPIRY_WARNING_DAYS = [7, 3] as const;

/** Provisioning finishes: reserved IPs become the batch's, the batch is active and its order completed. */
export async function completeProvisioning(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select()
    .from(ispBatches)
    .where(and(eq(ispBatches.status, "provisioning"), lte(ispBatches.provisionReadyAt, at)));
  for (const batch of due) {
    await runGuardedBatch(
      ctx.db,
      [
        // Only a batch still provisioning moves: a run that overlaps another changes nothing twice.
        abortIf(
          ctx.db,
          "state",
          sql`NOT EXISTS (SELECT 1 FROM ${ispBatches} WHERE ${ispBatches.id} = ${batch.id} AND ${ispBatches.status} = 'provisioning')`,
        ),
        ctx.db
          .update(ispIps)
          .set({ status: "assigned", assignedAt: at })
          .where(and(eq(ispIps.batchId, batch.id), eq(ispIps.status, "reserved"))),
        ctx.db.update(ispBatches).set({ status: "active", updatedAt: at }).where(eq(ispBatches.id, batch.id)),
        ctx.db
          .update(orders)
          .set({ status: "completed", updatedAt: at })
          .where(and(eq(orders.id, batch.orderId), eq(orders.status, "provisioning"))),
        eventStatement(ctx.db, {
          accountId: batch.accountId,
          type: eventTypes.orderCompleted,
          payload: { order_id: batch.orderId, product: "isp", batch_id: batch.id },
          dedupeKey: `${eventTypes.orderCompleted}:${batch.orderId}`,
          at,
        }),
      ],
      { state: conflict() },
    ).catch(ignoreStateConflict);
  }
  return due.length;
}

/**
 * Batches at the end of their period: auto-renewed (charged once per period, whatever the runs), or, when
 * renewal is off or cannot be paid, into the 7-day grace period in which their IPs stop working.
 */
export async function expireBatches(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select({ batch: ispBatches, subscription: subscriptions })
    .from(ispBatches)
    .leftJoin(
      subscriptions,
      and(eq(subscriptions.batchId, ispBatches.id), inArray(subscriptions.status, ["active", "past_due"])),
    )
    .where(and(eq(ispBatches.status, "active"), lte(ispBatches.expiresAt, at)));
  for (const { batch, subscription } of due) {
    if (batch.autoRenew && (await autoRenew(ctx, batch, subscription, at))) continue;
    await enterGrace(ctx, batch, at);
  }
  return due.length;
}

/** Renews for the subscription's cycle (monthly without one); a pending quantity decrease applies now. */
async function autoRenew(
  ctx: DomainContext,
  batch: BatchRow,
  subscription: SubscriptionRow | null,
  at: number,
): Promise<boolean> {
  const cycle = subscription?.cycle ?? "monthly";
  const quantity = subscription?.pendingQuantity ?? batch.quantity;
  const price = cyclePrice(batch.pricePerIpMonthMinor * quantity, cycle);
  const renewal = { months: cycleMonths(cycle), price, at, uniqueKey: `isp_renewal:${batch.id}:${batch.expiresAt}` };
  const [unchangedCheck, ...renewing] = renewalStatements(ctx, batch, renewal);
  const shrinking =
    subscription && quantity < batch.quantity
      ? [
          ...shrinkBatchStatements(ctx, batch.id, quantity),
          ctx.db
            .update(subscriptions)
            .set({ quantity, pendingQuantity: null, priceMinor: price })
            .where(eq(subscriptions.id, subscription.id)),
        ]
      : [];
  try {
    await runGuardedBatch(ctx.db, [unchangedCheck as Statement, ...shrinking, ...renewing], { state: conflict() });
    await accountChanged(ctx, batch.accountId);
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.code === "batch_changed") return true; // another run got there first
    if (error instanceof ApiError && error.code === "insufficient_balance") return false;
    throw error;
  }
}

async function enterGrace(ctx: DomainContext, batch: BatchRow, at: number): Promise<void> {
  await ctx.db.batch([
    ctx.db
      .update(ispBatches)
      .set({ status: "grace", graceUntil: batch.expiresAt + GRACE_PERIOD_MS, updatedAt: at })
      .where(
        and(eq(ispBatches.id, batch.id), eq(ispBatches.status, "active"), eq(ispBatches.expiresAt, batch.expiresAt)),
      ),
    ctx.db
      .update(subscriptions)
      .set({ status: "past_due", pastDueSince: at, updatedAt: at })
      .where(and(eq(subscriptions.batchId, batch.id), eq(subscriptions.status, "active"))),
  ]);
}

/** After grace the IPs are released to the inventory (no refund). */
export async function releaseAfterGrace(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select()
    .from(ispBatches)
    .where(and(eq(ispBatches.status, "grace"), lte(ispBatches.graceUntil, at)));
  for (const batch of due) {
    await runGuardedBatch(ctx.db, releaseStatements(ctx, batch, at), { state: conflict() }).catch(ignoreStateConflict);
  }
  return due.length;
}

/** Records `isp_batch.expiring` 7 and 3 days ahead, once per batch, period and threshold. */
export async function warnExpiringBatches(ctx: DomainContext, at: number): Promise<void> {
  const soon = await ctx.db
    .select()
    .from(ispBatches)
    .where(and(eq(ispBatches.status, "active"), lte(ispBatches.expiresAt, at + EXPIRY_WARNING_DAYS[0] * DAY)));
  for (const batch of soon) {
    const statements = EXPIRY_WARNING_DAYS.filter((days) => batch.expiresAt - at <= days * DAY).map((days) =>
      eventStatement(ctx.db, {
        accountId: batch.accountId,
        type: eventTypes.batchExpiring,
        payload: {
          batch_id: batch.id,
          expires_at: new Date(batch.expiresAt).toISOString(),
          days_left: days,
          auto_renew: batch.autoRenew,
          renewal_price_usd: fromMinor(batch.pricePerIpMonthMinor * batch.quantity),
        },
        dedupeKey: `${eventTypes.batchExpiring}:${batch.id}:${batch.expiresAt}:${days}d`,
        at,
      }),
    );
    if (statements.length > 0) await ctx.db.batch(statements as [(typeof statements)[number], ...typeof statements]);
  }
}

/** A run that lost a race to another (the row is no longer as it read it) has nothing left to do. */
function ignoreStateConflict(error: unknown): void {
  if (error instanceof ApiError && error.code === "batch_changed") return;
  throw error;
}

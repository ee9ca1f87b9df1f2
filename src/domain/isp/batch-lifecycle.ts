import { and, eq, inArray, lte } from "drizzle-orm";
import { type BatchRow, ispBatches, orders, type SubscriptionRow, subscriptions } from "../../db/schema";
import type { Statement } from "../../db/statements";
import { DAY, toIso } from "../../platform/clock";
import { fromMinor } from "../../platform/money";
import { cycleMonths, cyclePrice } from "../billing/prices";
import type { DomainContext } from "../context";
import { eventStatement, eventTypes } from "../events";
import { completeIspOrderStatements } from "../orders/orders";
import { batchPastDueStatement, updateSubscriptionStatement } from "../subscriptions/statements";
import { runUnitOfWork } from "../unit-of-work";
import { releaseStatements, renewalStatements } from "./batch-actions";
import { activateBatchStatements, batchUnchanged, enterGraceStatement, shrinkBatchStatements } from "./batches";

/**
 * The lifecycle of ISP batches, moved on by the every-minute cron. Each step is idempotent: a repeated or
 * overlapping run finds nothing left to do, since every batch it writes is guarded to be still as it read it,
 * and renewal charges carry unique keys.
 */

/** Days before expiry at which an `isp_batch.expiring` event is recorded (reference facts). */
export const EXPIRY_WARNING_DAYS = [7, 3] as const;

/** Provisioning finishes: reserved IPs become the batch's, the batch is active and its order completed. */
export async function completeProvisioning(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select({ batch: ispBatches, order: orders })
    .from(ispBatches)
    .innerJoin(orders, eq(orders.id, ispBatches.orderId))
    .where(and(eq(ispBatches.status, "provisioning"), lte(ispBatches.provisionReadyAt, at)));
  for (const { batch, order } of due) {
    // A batch that changed since it was read (or another run completed it) is left for the next run.
    await runUnitOfWork(ctx, [
      batchUnchanged(ctx.db, batch),
      ...activateBatchStatements(ctx.db, batch, at),
      ...completeIspOrderStatements(ctx, order, at),
    ]);
  }
  return due.length;
}

/**
 * Batches at the end of their period: auto-renewed (charged once per period, whatever the runs), or, when
 * renewal is off or cannot be paid, into the 7-day grace period in which their IPs stop working. `onlyBatchId`
 * limits the run to one batch (the sandbox's "expire now" test helper).
 */
export async function expireBatches(ctx: DomainContext, at: number, onlyBatchId?: string): Promise<number> {
  const due = await ctx.db
    .select({ batch: ispBatches, subscription: subscriptions })
    .from(ispBatches)
    .leftJoin(
      subscriptions,
      and(eq(subscriptions.batchId, ispBatches.id), inArray(subscriptions.status, ["active", "past_due"])),
    )
    .where(
      and(
        eq(ispBatches.status, "active"),
        lte(ispBatches.expiresAt, at),
        onlyBatchId === undefined ? undefined : eq(ispBatches.id, onlyBatchId),
      ),
    );
  for (const { batch, subscription } of due) {
    const renewed = batch.autoRenew ? await autoRenew(ctx, batch, subscription, at) : "off";
    if (renewed === "unpaid" || renewed === "off") await enterGrace(ctx, batch, at);
  }
  return due.length;
}

/**
 * Renews for the subscription's cycle (monthly without one); a pending quantity decrease applies now.
 * `renewed` also when another run renewed it first.
 */
async function autoRenew(
  ctx: DomainContext,
  batch: BatchRow,
  subscription: SubscriptionRow | null,
  at: number,
): Promise<"renewed" | "unpaid"> {
  const cycle = subscription?.cycle ?? "monthly";
  const quantity = subscription?.pendingQuantity ?? batch.quantity;
  const price = cyclePrice(batch.pricePerIpMonthMinor * quantity, cycle);
  const renewal = { months: cycleMonths(cycle), price, at, uniqueKey: `isp_renewal:${batch.id}:${batch.expiresAt}` };
  const [unchanged, ...renewing] = renewalStatements(ctx, batch, renewal);
  const shrinking: Statement[] =
    subscription && quantity < batch.quantity
      ? [
          ...shrinkBatchStatements(ctx.db, batch.id, quantity),
          updateSubscriptionStatement(ctx.db, subscription.id, { quantity, pendingQuantity: null, priceMinor: price }),
        ]
      : [];
  const outcome = await runUnitOfWork(ctx, [unchanged as Statement, ...shrinking, ...renewing]);
  if (outcome.committed) return "renewed";
  switch (outcome.failure) {
    case "insufficient_balance":
    case "budget":
      return "unpaid";
    case "state":
    case "already_charged":
      return "renewed";
    default:
      throw new Error(`ISP auto-renewal of ${batch.id} rolled back: ${outcome.failure}`);
  }
}

async function enterGrace(ctx: DomainContext, batch: BatchRow, at: number): Promise<void> {
  await runUnitOfWork(ctx, [enterGraceStatement(ctx.db, batch, at), batchPastDueStatement(ctx.db, batch.id, at)]);
}

/** After grace the IPs are released to the inventory (no refund). `onlyBatchId` limits the run to one batch. */
export async function releaseAfterGrace(ctx: DomainContext, at: number, onlyBatchId?: string): Promise<number> {
  const due = await ctx.db
    .select()
    .from(ispBatches)
    .where(
      and(
        eq(ispBatches.status, "grace"),
        lte(ispBatches.graceUntil, at),
        onlyBatchId === undefined ? undefined : eq(ispBatches.id, onlyBatchId),
      ),
    );
  for (const batch of due) await runUnitOfWork(ctx, releaseStatements(ctx, batch, at));
  return due.length;
}

/** Records `isp_batch.expiring` 7 and 3 days ahead, once per batch, period and threshold. */
export async function warnExpiringBatches(ctx: DomainContext, at: number): Promise<number> {
  const soon = await ctx.db
    .select()
    .from(ispBatches)
    .where(and(eq(ispBatches.status, "active"), lte(ispBatches.expiresAt, at + EXPIRY_WARNING_DAYS[0] * DAY)));
  const statements = soon.flatMap((batch) =>
    EXPIRY_WARNING_DAYS.filter((days) => batch.expiresAt - at <= days * DAY).map((days) =>
      eventStatement(ctx, {
        accountId: batch.accountId,
        type: eventTypes.batchExpiring,
        payload: {
          batch_id: batch.id,
          expires_at: toIso(batch.expiresAt),
          days_left: days,
          auto_renew: batch.autoRenew,
          renewal_price_usd: fromMinor(batch.pricePerIpMonthMinor * batch.quantity),
        },
        dedupeKey: `${eventTypes.batchExpiring}:${batch.id}:${batch.expiresAt}:${days}d`,
        at,
      }),
    ),
  );
  if (statements.length > 0) await runUnitOfWork(ctx, statements);
  return statements.length;
}

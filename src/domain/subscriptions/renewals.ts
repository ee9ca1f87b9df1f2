import { and, eq, inArray, lte, sql } from "drizzle-orm";
import { type SubscriptionRow, subscriptions } from "../../db/schema";
import { abortIf } from "../../db/statements";
import { addMonths, DAY } from "../../platform/clock";
import { BYTES_PER_GB } from "../../platform/units";
import { movementStatements } from "../billing/ledger";
import { addToPool, findPool } from "../billing/pools";
import { type BandwidthProduct, cycleMonths, cyclePrice, findTier } from "../billing/prices";
import type { DomainContext } from "../context";
import { type BatchFailure, runUnitOfWork } from "../unit-of-work";
import { updateSubscriptionStatement } from "./statements";

/** A renewal that cannot be paid is retried on every run for this long, then the subscription is cancelled. */
export const PAST_DUE_RETRY_MS = 7 * DAY;

/** Why a renewal goes unpaid: the balance cannot pay it, or it would pass a hard-stop budget. */
const UNPAID = new Set<BatchFailure>(["insufficient_balance", "budget"]);

/**
 * Subscriptions at the end of their period, moved on by the every-minute cron: bandwidth ones are renewed
 * (pending downgrades and cycle changes apply, the new period's GB join the pool), or `past_due` when the
 * balance cannot pay; `cancelling` ones, of every product, end: `cancelled` and archived. ISP subscriptions
 * renew with their batch (batch-lifecycle). `onlyId` limits the run to one subscription (the sandbox's "renew
 * now" test helper).
 */
export async function renewDueSubscriptions(ctx: DomainContext, at: number, onlyId?: string): Promise<number> {
  const due = await ctx.db
    .select()
    .from(subscriptions)
    .where(
      and(
        inArray(subscriptions.status, ["active", "past_due", "cancelling"]),
        lte(subscriptions.renewsAt, at),
        onlyId === undefined ? undefined : eq(subscriptions.id, onlyId),
      ),
    );
  for (const subscription of due) {
    if (subscription.status === "cancelling") await archive(ctx, subscription, at);
    else if (subscription.product !== "isp") await renewBandwidth(ctx, subscription, at);
  }
  return due.length;
}

async function archive(ctx: DomainContext, subscription: SubscriptionRow, at: number): Promise<void> {
  await ctx.db
    .update(subscriptions)
    .set({ status: "cancelled", archivedAt: at, updatedAt: at })
    .where(and(eq(subscriptions.id, subscription.id), eq(subscriptions.status, "cancelling")));
}

async function renewBandwidth(ctx: DomainContext, subscription: SubscriptionRow, at: number): Promise<void> {
  const product = subscription.product as BandwidthProduct;
  const cycle = subscription.pendingCycle ?? subscription.cycle;
  const plan = subscription.pendingPlan ?? (subscription.plan as string);
  const tier = await findTier(ctx, subscription.accountId, product, plan);
  const months = cycleMonths(cycle);
  const price = cyclePrice(tier.monthlyPriceMinor, cycle);
  const gbIncluded = tier.gbIncluded * months;
  const pool = await findPool(ctx, subscription.accountId, product);
  const outcome = await runUnitOfWork(ctx, [
    // Only a period still due is renewed: an overlapping run renews it once.
    abortIf(
      ctx.db,
      "state",
      sql`NOT EXISTS (SELECT 1 FROM ${subscriptions} WHERE ${subscriptions.id} = ${subscription.id}
          AND ${subscriptions.renewsAt} = ${subscription.renewsAt} AND ${subscriptions.status} IN ('active', 'past_due'))`,
    ),
    ...movementStatements(ctx.db, {
      accountId: subscription.accountId,
      amount: -price,
      reason: "subscription_renewal",
      reference: subscription.id,
      uniqueKey: `subscription_renewal:${subscription.id}:${subscription.renewsAt}`,
      at,
    }),
    updateSubscriptionStatement(ctx.db, subscription.id, {
      status: "active",
      plan,
      cycle,
      priceMinor: price,
      gbIncluded,
      periodStart: subscription.renewsAt,
      renewsAt: addMonths(subscription.renewsAt, months),
      periodStartUsedBytes: pool.usedBytes,
      pendingPlan: null,
      pendingCycle: null,
      pastDueSince: null,
      updatedAt: at,
    }),
    addToPool(ctx.db, subscription.accountId, product, gbIncluded * BYTES_PER_GB),
  ]);
  // A hard-stop budget refuses a renewal as an empty balance does: past due, retried on every run.
  if (!outcome.committed && UNPAID.has(outcome.failure)) await markPastDue(ctx, subscription, at);
  // `state` or `already_charged`: another run renewed it first.
}

async function markPastDue(ctx: DomainContext, subscription: SubscriptionRow, at: number): Promise<void> {
  const since = subscription.pastDueSince ?? at;
  const givingUp = at - since >= PAST_DUE_RETRY_MS;
  await ctx.db
    .update(subscriptions)
    .set(
      givingUp
        ? { status: "cancelled", archivedAt: at, updatedAt: at }
        : { status: "past_due", pastDueSince: since, updatedAt: at },
    )
    .where(and(eq(subscriptions.id, subscription.id), eq(subscriptions.renewsAt, subscription.renewsAt)));
}

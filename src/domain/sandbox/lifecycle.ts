import { and, eq } from "drizzle-orm";
import { type BatchRow, ispBatches, type SubscriptionRow, subscriptions } from "../../db/schema";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import type { DomainContext, Principal } from "../context";
import { expireBatches, releaseAfterGrace } from "../isp/batch-lifecycle";
import { findBatch } from "../isp/batches";
import { renewDueSubscriptions } from "../subscriptions/renewals";
import { findSubscription } from "../subscriptions/subscriptions";
import { assertSandbox } from "./twins";

/**
 * Stripe-style "make it happen now" for the sandbox: the moment a batch's period (or grace) or a subscription's
 * period ends is moved to now, then the cron's own idempotent verb runs for that one resource — so what happens
 * (auto-renewal and its charge, grace, release, renewal or past_due, archiving) is exactly what the cron does.
 */

/** An active batch's period ends now (auto-renewed, or into grace); a batch in grace is released now. */
export async function expireBatchNow(ctx: DomainContext, principal: Principal, id: string): Promise<BatchRow> {
  assertSandbox(principal);
  const batch = await findBatch(ctx, principal, id);
  const at = now();
  if (batch.status === "active") await endBatchPeriod(ctx, batch, at);
  else if (batch.status === "grace") await endGrace(ctx, batch, at);
  else {
    const message = `The batch is ${batch.status}: only an active batch or one in grace can be expired.`;
    throw new ApiError("batch_not_active", message);
  }
  return findBatch(ctx, principal, id);
}

/** The subscription's period ends now: renewed (or past_due), archived when cancelling; ISP ones with their batch. */
export async function renewSubscriptionNow(
  ctx: DomainContext,
  principal: Principal,
  id: string,
): Promise<SubscriptionRow> {
  assertSandbox(principal);
  const subscription = await findSubscription(ctx, principal, id);
  const at = now();
  if (subscription.product === "isp" && subscription.status !== "cancelling") {
    const batch = subscription.batchId ? await findBatch(ctx, principal, subscription.batchId) : null;
    if (batch?.status !== "active" || !["active", "past_due"].includes(subscription.status)) {
      throw new ApiError("subscription_not_active", "Only an active ISP subscription of an active batch renews.");
    }
    await endBatchPeriod(ctx, batch, at);
  } else {
    if (!["active", "past_due", "cancelling"].includes(subscription.status)) {
      throw new ApiError("subscription_not_active", `A ${subscription.status} subscription does not renew.`);
    }
    await ctx.db
      .update(subscriptions)
      .set({ renewsAt: at })
      .where(and(eq(subscriptions.id, subscription.id), eq(subscriptions.renewsAt, subscription.renewsAt)));
    await renewDueSubscriptions(ctx, at, subscription.id);
  }
  return findSubscription(ctx, principal, id);
}

async function endBatchPeriod(ctx: DomainContext, batch: BatchRow, at: number): Promise<void> {
  await ctx.db
    .update(ispBatches)
    .set({ expiresAt: at, updatedAt: at })
    .where(
      and(eq(ispBatches.id, batch.id), eq(ispBatches.status, "active"), eq(ispBatches.expiresAt, batch.expiresAt)),
    );
  await expireBatches(ctx, at, batch.id);
}

async function endGrace(ctx: DomainContext, batch: BatchRow, at: number): Promise<void> {
  await ctx.db
    .update(ispBatches)
    .set({ graceUntil: at, updatedAt: at })
    .where(and(eq(ispBatches.id, batch.id), eq(ispBatches.status, "grace")));
  await releaseAfterGrace(ctx, at, batch.id);
}

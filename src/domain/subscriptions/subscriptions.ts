import { and, eq, inArray, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import {
  type AccountRow,
  type BatchRow,
  type Cycle,
  ispBatches,
  ispIps,
  type SubscriptionRow,
  subscriptions,
} from "../../db/schema";
import type { Principal } from "../../env";
import { addMonths, DAY, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { keysetPage } from "../../platform/pagination";
import { accountChanged } from "../accounts/account-cache";
import { abortIf, movementStatements, runGuardedBatch, type Statement } from "../billing/ledger";
import { addToPoolStatement, findPool, MB_PER_GB } from "../billing/pools";
import { type BandwidthProduct, cycleMonths, cyclePrice, findTier, remainingShare } from "../billing/prices";
import type { DomainContext } from "../context";
import { findBatch } from "../isp/batches";
import { allocateStatements } from "../isp/inventory";
import { assertKycClear, ISP_QUANTITY } from "../orders/orders";

/** Statuses of a subscription that still counts: only `cancelled` (archived) frees its product and plan. */
const LIVE = ["active", "paused", "cancelling", "past_due"] as const;
/** Proration of ISP quantity increases: a month is counted as 30 days. */
const PRORATION_MONTH_MS = 30 * DAY;

export type NewSubscription =
  | { product: BandwidthProduct; plan: string; cycle: Cycle }
  | { product: "isp"; batch_id: string; cycle: Cycle };

export interface SubscriptionPatch {
  plan?: string;
  cycle?: Cycle;
  quantity?: number;
}

/** A new subscription row: what differs per product is given, the rest starts empty. */
function newSubscription(
  fields: Pick<
    SubscriptionRow,
    | "accountId"
    | "product"
    | "plan"
    | "batchId"
    | "cycle"
    | "quantity"
    | "gbIncluded"
    | "priceMinor"
    | "periodStart"
    | "renewsAt"
  > & { periodStartUsedMb: number; at: number },
): SubscriptionRow {
  const { at, ...rest } = fields;
  return {
    id: newId("subscription", at),
    ...rest,
    status: "active",
    pendingPlan: null,
    pendingCycle: null,
    pendingQuantity: null,
    pastDueSince: null,
    archivedAt: null,
    createdAt: at,
    updatedAt: at,
  };
}

const alreadySubscribed = () => new ApiError("already_subscribed");
const changedMeanwhile = () =>
  new ApiError("subscription_not_active", "The subscription changed while this request ran; retry it.");

export async function createSubscription(
  ctx: DomainContext,
  principal: Principal,
  account: AccountRow,
  input: NewSubscription,
): Promise<SubscriptionRow> {
  try {
    return input.product === "isp"
      ? await subscribeBatch(ctx, principal, input.batch_id, input.cycle)
      : await subscribeBandwidth(ctx, account, input);
  } catch (error) {
    if (isUniqueViolation(error, "subscriptions.")) throw alreadySubscribed();
    throw error;
  }
}

async function subscribeBandwidth(
  ctx: DomainContext,
  account: AccountRow,
  input: { product: BandwidthProduct; plan: string; cycle: Cycle },
): Promise<SubscriptionRow> {
  const tier = await findTier(ctx.db, account.id, input.product, input.plan);
  const live = await ctx.db
    .select({ id: subscriptions.id })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.accountId, account.id),
        eq(subscriptions.product, input.product),
        eq(subscriptions.plan, input.plan),
        sql`${subscriptions.status} IN ${LIVE}`,
      ),
    )
    .get();
  if (live) throw alreadySubscribed();
  assertKycClear(account);

  const at = now();
  const months = cycleMonths(input.cycle);
  const pool = await findPool(ctx.db, account.id, input.product);
  const subscription = newSubscription({
    accountId: account.id,
    product: input.product,
    plan: input.plan,
    batchId: null,
    cycle: input.cycle,
    quantity: null,
    gbIncluded: tier.gbIncluded * months,
    priceMinor: cyclePrice(tier.monthlyPriceMinor, input.cycle),
    periodStart: at,
    renewsAt: addMonths(at, months),
    periodStartUsedMb: pool.usedMb,
    at,
  });

  await runGuardedBatch(ctx.db, [
    ...movementStatements(ctx.db, {
      accountId: account.id,
      amount: -subscription.priceMinor,
      reason: "subscription",
      reference: subscription.id,
      at,
    }),
    ctx.db.insert(subscriptions).values(subscription),
    addToPoolStatement(ctx.db, account.id, input.product, (subscription.gbIncluded ?? 0) * MB_PER_GB),
  ]);
  await accountChanged(ctx, account.id);
  return subscription;
}

/** Turns auto-renew on for an existing batch; the current period is already paid. */
async function subscribeBatch(ctx: DomainContext, principal: Principal, batchId: string, cycle: Cycle) {
  const batch = await findBatch(ctx, principal, batchId);
  if (batch.status !== "active" && batch.status !== "provisioning") {
    throw new ApiError("batch_not_active", `Cannot subscribe a batch that is ${batch.status}; renew it first.`);
  }
  const live = await ctx.db
    .select({ id: subscriptions.id })
    .from(subscriptions)
    .where(and(eq(subscriptions.batchId, batch.id), sql`${subscriptions.status} IN ${LIVE}`))
    .get();
  if (live) throw alreadySubscribed();
  const at = now();
  const subscription = newSubscription({
    accountId: batch.accountId,
    product: "isp",
    plan: null,
    batchId: batch.id,
    cycle,
    quantity: batch.quantity,
    gbIncluded: null,
    priceMinor: cyclePrice(batch.pricePerIpMonthMinor * batch.quantity, cycle),
    periodStart: batch.periodStart,
    renewsAt: batch.expiresAt,
    periodStartUsedMb: 0,
    at,
  });

  await ctx.db.batch([
    ctx.db.insert(subscriptions).values(subscription),
    ctx.db
      .update(ispBatches)
      .set({ autoRenew: true, renewalMonths: cycleMonths(cycle), updatedAt: at })
      .where(eq(ispBatches.id, batch.id)),
  ]);
  return subscription;
}

export function listSubscriptions(ctx: DomainContext, principal: Principal, query: { cursor?: string; limit: number }) {
  const page = keysetPage(subscriptions.id, query);
  return ctx.db
    .select()
    .from(subscriptions)
    .where(and(eq(subscriptions.accountId, principal.accountId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

export async function findSubscription(ctx: DomainContext, principal: Principal, id: string): Promise<SubscriptionRow> {
  const subscription = isId("subscription", id)
    ? await ctx.db
        .select()
        .from(subscriptions)
        .where(and(eq(subscriptions.id, id), eq(subscriptions.accountId, principal.accountId)))
        .get()
    : undefined;
  if (!subscription) throw new ApiError("not_found", "No subscription with this id exists.");
  return subscription;
}

/** Aborts the batch unless the subscription is still as read. */
function unchanged(ctx: DomainContext, subscription: SubscriptionRow): Statement {
  return abortIf(
    ctx.db,
    "state",
    sql`NOT EXISTS (SELECT 1 FROM ${subscriptions} WHERE ${subscriptions.id} = ${subscription.id}
        AND ${subscriptions.updatedAt} = ${subscription.updatedAt})`,
  );
}

function invalidField(field: string, message: string): ApiError {
  return new ApiError("invalid_request", `${field}: ${message}`, { details: [{ field, message }] });
}

/**
 * Plan, cycle or quantity changes. Upgrades are prorated and charged now; downgrades wait for the next renewal
 * (and may not go below this period's usage); cycle changes apply at renewal; ISP quantity increases provision
 * the extra IPs now, prorated; decreases apply at renewal.
 */
export async function updateSubscription(
  ctx: DomainContext,
  principal: Principal,
  account: AccountRow,
  id: string,
  patch: SubscriptionPatch,
): Promise<SubscriptionRow> {
  const subscription = await findSubscription(ctx, principal, id);
  if (subscription.status !== "active") {
    throw new ApiError("subscription_not_active", `Cannot change a subscription that is ${subscription.status}.`);
  }
  const isIsp = subscription.product === "isp";
  if (isIsp && patch.plan !== undefined) throw invalidField("plan", "ISP subscriptions have no plan; change quantity.");
  if (!isIsp && patch.quantity !== undefined) throw invalidField("quantity", "only ISP subscriptions have a quantity.");

  const at = now();
  const statements: Statement[] = [unchanged(ctx, subscription)];
  const changes: Partial<SubscriptionRow> = { updatedAt: at };
  let charge: Minor = 0;

  if (patch.cycle !== undefined && patch.cycle !== subscription.cycle) changes.pendingCycle = patch.cycle;
  if (patch.plan !== undefined && patch.plan !== subscription.plan) {
    charge += await changePlan(ctx, account, subscription, patch.plan, at, changes, statements);
  }
  if (patch.quantity !== undefined && patch.quantity !== subscription.quantity) {
    charge += await changeQuantity(ctx, principal, subscription, patch.quantity, at, changes, statements);
  }
  if (charge > 0) {
    statements.push(
      ...movementStatements(ctx.db, {
        accountId: account.id,
        amount: -charge,
        reason: "subscription_upgrade",
        reference: subscription.id,
        at,
      }),
    );
  }
  statements.push(ctx.db.update(subscriptions).set(changes).where(eq(subscriptions.id, subscription.id)));
  await runGuardedBatch(ctx.db, statements, {
    state: changedMeanwhile(),
    inventory: new ApiError("insufficient_inventory"),
  });
  if (charge > 0) await accountChanged(ctx, account.id);
  return findSubscription(ctx, principal, id);
}

async function changePlan(
  ctx: DomainContext,
  account: AccountRow,
  subscription: SubscriptionRow,
  plan: string,
  at: number,
  changes: Partial<SubscriptionRow>,
  statements: Statement[],
): Promise<Minor> {
  const product = subscription.product as BandwidthProduct;
  const tier = await findTier(ctx.db, account.id, product, plan);
  const months = cycleMonths(subscription.cycle);
  const newPrice = cyclePrice(tier.monthlyPriceMinor, subscription.cycle);
  const newGb = tier.gbIncluded * months;
  if (newPrice <= subscription.priceMinor) {
    const pool = await findPool(ctx.db, account.id, product);
    const usedMb = pool.usedMb - subscription.periodStartUsedMb;
    if (usedMb > newGb * MB_PER_GB) {
      throw new ApiError(
        "downgrade_below_usage",
        `This period already used ${usedMb / MB_PER_GB} GB; the ${plan} tier includes ${newGb} GB.`,
      );
    }
    changes.pendingPlan = plan;
    return 0;
  }
  const share = remainingShare(subscription.periodStart, subscription.renewsAt, at);
  const extraMb = Math.round((newGb - (subscription.gbIncluded ?? 0)) * MB_PER_GB * share);
  statements.push(addToPoolStatement(ctx.db, account.id, product, Math.max(0, extraMb)));
  Object.assign(changes, { plan, priceMinor: newPrice, gbIncluded: newGb, pendingPlan: null });
  return Math.ceil((newPrice - subscription.priceMinor) * share);
}

async function changeQuantity(
  ctx: DomainContext,
  principal: Principal,
  subscription: SubscriptionRow,
  quantity: number,
  at: number,
  changes: Partial<SubscriptionRow>,
  statements: Statement[],
): Promise<Minor> {
  if (quantity < ISP_QUANTITY.min || quantity > ISP_QUANTITY.max) throw new ApiError("quantity_out_of_range");
  const batch: BatchRow = await findBatch(ctx, principal, subscription.batchId as string);
  if (quantity < batch.quantity) {
    changes.pendingQuantity = quantity;
    return 0;
  }
  const added = quantity - batch.quantity;
  statements.push(
    ...allocateStatements(ctx.db, {
      country: batch.country,
      city: batch.city,
      asn: batch.asn,
      batchId: batch.id,
      quantity: added,
      status: batch.status === "provisioning" ? "reserved" : "assigned",
      expectedTotal: quantity,
      at,
    }),
    ctx.db.update(ispBatches).set({ quantity, updatedAt: at }).where(eq(ispBatches.id, batch.id)),
  );
  Object.assign(changes, {
    quantity,
    pendingQuantity: null,
    priceMinor: cyclePrice(batch.pricePerIpMonthMinor * quantity, subscription.cycle),
  });
  const remainingMs = Math.max(0, batch.expiresAt - at);
  return Math.ceil((batch.pricePerIpMonthMinor * added * remainingMs) / PRORATION_MONTH_MS);
}

export async function pauseSubscription(ctx: DomainContext, principal: Principal, id: string) {
  return transition(ctx, principal, id, ["active"], "paused");
}

export async function cancelSubscription(ctx: DomainContext, principal: Principal, id: string) {
  return transition(ctx, principal, id, ["active", "paused", "past_due"], "cancelling");
}

/** Pause and cancel both stop renewal; an ISP batch then stops auto-renewing and expires into grace. */
async function transition(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  from: SubscriptionRow["status"][],
  to: "paused" | "cancelling",
): Promise<SubscriptionRow> {
  const subscription = await findSubscription(ctx, principal, id);
  if (!from.includes(subscription.status)) {
    throw new ApiError("subscription_not_active", `Cannot move a ${subscription.status} subscription to ${to}.`);
  }
  const at = now();
  const statements: Statement[] = [
    unchanged(ctx, subscription),
    ctx.db.update(subscriptions).set({ status: to, updatedAt: at }).where(eq(subscriptions.id, subscription.id)),
  ];
  if (subscription.batchId) {
    statements.push(
      ctx.db.update(ispBatches).set({ autoRenew: false, updatedAt: at }).where(eq(ispBatches.id, subscription.batchId)),
    );
  }
  await runGuardedBatch(ctx.db, statements, { state: changedMeanwhile() });
  return findSubscription(ctx, principal, id);
}

/** The IPs a pending ISP decrease gives back at renewal: the most recently assigned first. */
export function shrinkBatchStatements(ctx: DomainContext, batchId: string, keep: number): Statement[] {
  const surplus = ctx.db
    .select({ id: ispIps.id })
    .from(ispIps)
    .where(eq(ispIps.batchId, batchId))
    .orderBy(sql`${ispIps.assignedAt} DESC, ${ispIps.id} DESC`)
    .limit(ISP_QUANTITY.max)
    .offset(keep);
  return [
    ctx.db
      .update(ispIps)
      .set({ status: "available", batchId: null, assignedAt: null })
      .where(inArray(ispIps.id, surplus)),
    ctx.db.update(ispBatches).set({ quantity: keep }).where(eq(ispBatches.id, batchId)),
  ];
}

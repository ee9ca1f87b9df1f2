import { and, eq, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { type AccountRow, type Cycle, type SubscriptionRow, subscriptions } from "../../db/schema";
import { addMonths, DAY, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { BYTES_PER_GB, bytesToGb } from "../../platform/units";
import { currentAccount } from "../accounts/accounts";
import { type AuditAction, auditStatements } from "../audit/audit-log";
import { movementStatements } from "../billing/ledger";
import { addToPool, findPool } from "../billing/pools";
import { type BandwidthProduct, cycleMonths, cyclePrice, findTier, remainingShare } from "../billing/prices";
import type { DomainContext, Principal } from "../context";
import { assertIspQuantity, findBatch, growBatchStatements, updateBatchStatement } from "../isp/batches";
import { assertKycClear } from "../orders/orders";
import { assertInScope, productInScope } from "../scope";
import { commit, type Step } from "../unit-of-work";
import {
  insertSubscriptionStatement,
  LIVE_STATUSES,
  subscriptionUnchanged,
  updateSubscriptionStatement,
} from "./statements";

/** Proration of ISP quantity increases: a month is counted as 30 days. */
const PRORATION_MONTH_MS = 30 * DAY;

export type NewSubscription =
  | { product: BandwidthProduct; plan: string; cycle: Cycle }
  | { product: "isp"; batchId: string; cycle: Cycle };

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
  > & { periodStartUsedBytes: number; at: number },
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
const subscriptionFailures = { state: changedMeanwhile, inventory: () => new ApiError("insufficient_inventory") };

export async function createSubscription(
  ctx: DomainContext,
  principal: Principal,
  input: NewSubscription,
): Promise<SubscriptionRow> {
  assertInScope(principal, [input.product]);
  try {
    return input.product === "isp"
      ? await subscribeBatch(ctx, principal, input.batchId, input.cycle)
      : await subscribeBandwidth(ctx, await currentAccount(ctx, principal), input);
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
  const tier = await findTier(ctx, account.id, input.product, input.plan);
  const live = await ctx.db
    .select({ id: subscriptions.id })
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.accountId, account.id),
        eq(subscriptions.product, input.product),
        eq(subscriptions.plan, input.plan),
        sql`${subscriptions.status} IN ${LIVE_STATUSES}`,
      ),
    )
    .get();
  if (live) throw alreadySubscribed();
  assertKycClear(account);

  const at = now();
  const months = cycleMonths(input.cycle);
  const pool = await findPool(ctx, account.id, input.product);
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
    periodStartUsedBytes: pool.usedBytes,
    at,
  });

  await commit(ctx, [
    ...movementStatements(ctx.db, {
      accountId: account.id,
      amount: -subscription.priceMinor,
      reason: "subscription",
      reference: subscription.id,
      at,
    }),
    insertSubscriptionStatement(ctx.db, subscription),
    ...subscriptionAudit(ctx, "subscription.created", undefined, subscription),
    addToPool(ctx.db, account.id, input.product, (subscription.gbIncluded ?? 0) * BYTES_PER_GB),
  ]);
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
    .where(and(eq(subscriptions.batchId, batch.id), sql`${subscriptions.status} IN ${LIVE_STATUSES}`))
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
    periodStartUsedBytes: 0,
    at,
  });

  await commit(ctx, [
    insertSubscriptionStatement(ctx.db, subscription),
    ...subscriptionAudit(ctx, "subscription.created", undefined, subscription),
    updateBatchStatement(ctx.db, batch.id, { autoRenew: true, renewalMonths: cycleMonths(cycle), updatedAt: at }),
  ]);
  return subscription;
}

/** The account's subscriptions that the key's scope covers, newest first, archived ones included. */
export function listSubscriptions(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const page = keysetPage(subscriptions.id, query);
  return ctx.db
    .select()
    .from(subscriptions)
    .where(
      and(
        eq(subscriptions.accountId, principal.accountId),
        productInScope(principal, subscriptions.product),
        page.where,
      ),
    )
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
  assertInScope(principal, [subscription.product]);
  return subscription;
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
  const change: Change = {
    statements: [subscriptionUnchanged(ctx.db, subscription)],
    fields: { updatedAt: at },
    charge: 0,
  };
  if (patch.cycle !== undefined && patch.cycle !== subscription.cycle) change.fields.pendingCycle = patch.cycle;
  if (patch.plan !== undefined && patch.plan !== subscription.plan) {
    await changePlan(ctx, principal, subscription, patch.plan, at, change);
  }
  if (patch.quantity !== undefined && patch.quantity !== subscription.quantity) {
    await changeQuantity(ctx, principal, subscription, patch.quantity, at, change);
  }
  if (change.charge > 0) {
    change.statements.push(
      ...movementStatements(ctx.db, {
        accountId: subscription.accountId,
        amount: -change.charge,
        reason: "subscription_upgrade",
        reference: subscription.id,
        at,
      }),
    );
  }
  change.statements.push(
    updateSubscriptionStatement(ctx.db, subscription.id, change.fields),
    ...subscriptionAudit(ctx, "subscription.updated", subscription, change.fields),
  );
  await commit(ctx, change.statements, subscriptionFailures);
  return findSubscription(ctx, principal, id);
}

/** A subscription change's audit entry (the batch's guards decide whether any of it commits). */
function subscriptionAudit(
  ctx: DomainContext,
  action: AuditAction,
  before: SubscriptionRow | undefined,
  after: Partial<SubscriptionRow>,
): Step[] {
  const subscription = (before ?? after) as SubscriptionRow;
  return auditStatements(ctx, {
    action,
    accountId: subscription.accountId,
    resourceId: subscription.id,
    products: [subscription.product],
    before,
    after,
  });
}

/** What a PATCH does, built up by its parts: statements to run, fields to set, money to charge now. */
interface Change {
  statements: Step[];
  fields: Partial<SubscriptionRow>;
  charge: Minor;
}

async function changePlan(
  ctx: DomainContext,
  principal: Principal,
  subscription: SubscriptionRow,
  plan: string,
  at: number,
  change: Change,
): Promise<void> {
  const product = subscription.product as BandwidthProduct;
  const tier = await findTier(ctx, subscription.accountId, product, plan);
  const months = cycleMonths(subscription.cycle);
  const newPrice = cyclePrice(tier.monthlyPriceMinor, subscription.cycle);
  const newGb = tier.gbIncluded * months;
  if (newPrice <= subscription.priceMinor) {
    const pool = await findPool(ctx, principal.accountId, product);
    const usedBytes = pool.usedBytes - subscription.periodStartUsedBytes;
    if (usedBytes > newGb * BYTES_PER_GB) {
      throw new ApiError(
        "downgrade_below_usage",
        `This period already used ${bytesToGb(usedBytes)} GB; the ${plan} tier includes ${newGb} GB.`,
      );
    }
    change.fields.pendingPlan = plan;
    return;
  }
  const share = remainingShare(subscription.periodStart, subscription.renewsAt, at);
  const extraBytes = Math.round((newGb - (subscription.gbIncluded ?? 0)) * BYTES_PER_GB * share);
  change.statements.push(addToPool(ctx.db, subscription.accountId, product, Math.max(0, extraBytes)));
  Object.assign(change.fields, { plan, priceMinor: newPrice, gbIncluded: newGb, pendingPlan: null });
  change.charge += Math.ceil((newPrice - subscription.priceMinor) * share);
}

async function changeQuantity(
  ctx: DomainContext,
  principal: Principal,
  subscription: SubscriptionRow,
  quantity: number,
  at: number,
  change: Change,
): Promise<void> {
  assertIspQuantity(quantity);
  const batch = await findBatch(ctx, principal, subscription.batchId as string);
  if (quantity < batch.quantity) {
    change.fields.pendingQuantity = quantity;
    return;
  }
  change.statements.push(...growBatchStatements(ctx.db, batch, quantity, at));
  Object.assign(change.fields, {
    quantity,
    pendingQuantity: null,
    priceMinor: cyclePrice(batch.pricePerIpMonthMinor * quantity, subscription.cycle),
  });
  const remainingMs = Math.max(0, batch.expiresAt - at);
  change.charge += Math.ceil(
    (batch.pricePerIpMonthMinor * (quantity - batch.quantity) * remainingMs) / PRORATION_MONTH_MS,
  );
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
  const fields = { status: to, updatedAt: at };
  const statements: Step[] = [
    subscriptionUnchanged(ctx.db, subscription),
    updateSubscriptionStatement(ctx.db, subscription.id, fields),
    ...subscriptionAudit(ctx, to === "paused" ? "subscription.paused" : "subscription.canceled", subscription, fields),
  ];
  if (subscription.batchId) {
    statements.push(updateBatchStatement(ctx.db, subscription.batchId, { autoRenew: false, updatedAt: at }));
  }
  await commit(ctx, statements, subscriptionFailures);
  return findSubscription(ctx, principal, id);
}

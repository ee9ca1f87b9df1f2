import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { AccountRow, BatchRow, IspIpRow } from "../../db/schema";
import { ipReplacements, ispBatches, ispIps, subscriptions, subusers } from "../../db/schema";
import type { Principal } from "../../env";
import { addMonths, DAY, now, SECOND } from "../../platform/clock";
import { randomString, seal, sha256Hex, unseal } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { keysetPage } from "../../platform/pagination";
import { accountChanged } from "../accounts/account-cache";
import { abortIf, movementStatements, runGuardedBatch, type Statement } from "../billing/ledger";
import type { DomainContext } from "../context";
import { inKeyScope } from "../subusers/subusers";
import { allocateStatements, releaseStatement } from "./inventory";

/** Replacements are free this long after purchase (spec §4.4). */
export const FREE_REPLACEMENT_WINDOW_MS = 14 * DAY;
/** Afterwards, this share of the batch (rounded up) is free per billing period. */
export const FREE_REPLACEMENT_PERCENT = 10;
/** A cancelled or unpaid batch can still be renewed this long after it expires (spec §8.5). */
export const GRACE_PERIOD_MS = 7 * DAY;
export const PASSWORD_OVERLAP_MS = 60 * SECOND;
const BATCH_PASSWORD_LENGTH = 24;

export function freeReplacementsPerPeriod(quantity: number): number {
  return Math.ceil((quantity * FREE_REPLACEMENT_PERCENT) / 100);
}

export async function newBatchPassword(sealingKey: string) {
  const password = randomString(BATCH_PASSWORD_LENGTH);
  return { password, passwordSealed: await seal(password, sealingKey), passwordHash: await sha256Hex(password) };
}

function assertIspScope(principal: Principal): void {
  if (!inKeyScope(principal, ["isp"])) {
    throw new ApiError("subuser_scope_mismatch", "The API key's product scope does not cover ISP.");
  }
}

/** A batch of the caller's account; unknown ids and other accounts' ids are both 404 `not_found`. */
export async function findBatch(ctx: DomainContext, principal: Principal, id: string): Promise<BatchRow> {
  assertIspScope(principal);
  const batch = isId("batch", id)
    ? await ctx.db
        .select()
        .from(ispBatches)
        .where(and(eq(ispBatches.id, id), eq(ispBatches.accountId, principal.accountId)))
        .get()
    : undefined;
  if (!batch) throw new ApiError("not_found", "No ISP batch with this id exists.");
  return batch;
}

function assertUsable(batch: BatchRow, action: string, allowed: BatchRow["status"][] = ["active"]): void {
  if (!allowed.includes(batch.status)) {
    throw new ApiError("batch_not_active", `Cannot ${action} a batch that is ${batch.status}.`);
  }
}

export function listBatches(ctx: DomainContext, principal: Principal, query: { cursor?: string; limit: number }) {
  assertIspScope(principal);
  const page = keysetPage(ispBatches.id, query);
  return ctx.db
    .select()
    .from(ispBatches)
    .where(and(eq(ispBatches.accountId, principal.accountId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

export async function batchIps(ctx: DomainContext, batchId: string): Promise<IspIpRow[]> {
  return ctx.db
    .select()
    .from(ispIps)
    .where(and(eq(ispIps.batchId, batchId), eq(ispIps.status, "assigned")))
    .orderBy(ispIps.ip);
}

/** The proxy credentials shared by every IP of the batch: `{prefix}_{sub-user name}` and the batch password. */
export async function batchCredentials(ctx: DomainContext, batch: BatchRow) {
  const subuser = await ctx.db
    .select({ name: subusers.name })
    .from(subusers)
    .where(eq(subusers.id, batch.subuserId))
    .get();
  return {
    user: `${ctx.env.GATEWAY_USER_PREFIX}_${subuser?.name ?? ""}`,
    password: await unseal(batch.passwordSealed, ctx.env.SEALING_KEY),
  };
}

/** Aborts the batch unless the row is still as read (a concurrent change wins, this one retries). */
function unchanged(ctx: DomainContext, batch: BatchRow): Statement {
  return abortIf(
    ctx.db,
    "state",
    sql`NOT EXISTS (SELECT 1 FROM ${ispBatches} WHERE ${ispBatches.id} = ${batch.id}
        AND ${ispBatches.updatedAt} = ${batch.updatedAt})`,
  );
}

export const conflict = () => new ApiError("batch_changed", "The batch changed meanwhile; retry the request.");

/**
 * Swaps IPs of a batch (all, or those matching `retire`) for fresh ones of the same geo; the retired IPs return
 * to the inventory at once. The batch aborts with `insufficient_inventory` if the geo cannot supply them.
 */
function swapStatements(
  ctx: DomainContext,
  batch: BatchRow,
  swap: { retire: SQL | undefined; count: number; city: string | null; at: number },
): Statement[] {
  const retiring = `${batch.id}:retiring`;
  return [
    ctx.db
      .update(ispIps)
      .set({ batchId: retiring })
      .where(and(eq(ispIps.batchId, batch.id), swap.retire)),
    ...allocateStatements(ctx.db, {
      country: batch.country,
      city: swap.city,
      asn: batch.asn,
      batchId: batch.id,
      quantity: swap.count,
      status: "assigned",
      expectedTotal: batch.quantity,
      at: swap.at,
    }),
    releaseStatement(ctx.db, eq(ispIps.batchId, retiring)),
  ];
}

/** Replaces every IP of the batch, once per billing period; uses up that period's free replacements. */
export async function refreshBatch(ctx: DomainContext, principal: Principal, id: string): Promise<BatchRow> {
  const batch = await findBatch(ctx, principal, id);
  assertUsable(batch, "refresh");
  if (batch.refreshUsed) throw new ApiError("refresh_already_used");
  const at = now();
  await runGuardedBatch(
    ctx.db,
    [
      unchanged(ctx, batch),
      ...swapStatements(ctx, batch, { retire: undefined, count: batch.quantity, city: batch.city, at }),
      ctx.db
        .update(ispBatches)
        .set({ refreshUsed: true, replacementsUsed: freeReplacementsPerPeriod(batch.quantity), updatedAt: at })
        .where(eq(ispBatches.id, batch.id)),
    ],
    { state: conflict(), inventory: new ApiError("insufficient_inventory") },
  );
  return findBatch(ctx, principal, id);
}

/** Extends the batch by `months` (same IPs, same password) and starts a new billing period. */
export async function renewBatch(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  months: number,
): Promise<BatchRow> {
  const batch = await findBatch(ctx, principal, id);
  assertUsable(batch, "renew", ["active", "grace"]);
  const renewal = { months, price: batch.pricePerIpMonthMinor * batch.quantity * months, at: now(), uniqueKey: null };
  await runGuardedBatch(ctx.db, renewalStatements(ctx, batch, renewal), { state: conflict() });
  await accountChanged(ctx, batch.accountId);
  return findBatch(ctx, principal, id);
}

export interface Renewal {
  months: number;
  price: Minor;
  at: number;
  /** Set by the auto-renewal job: the same period is never charged twice. */
  uniqueKey: string | null;
}

/** The statements of a renewal, shared by `POST …/renew` and the auto-renewal job. */
export function renewalStatements(ctx: DomainContext, batch: BatchRow, renewal: Renewal): Statement[] {
  // An active batch extends from its end; a batch in grace starts a new period now (its IPs did not work).
  const periodStart = batch.status === "grace" ? renewal.at : batch.expiresAt;
  const expiresAt = addMonths(periodStart, renewal.months);
  return [
    unchanged(ctx, batch),
    ...movementStatements(ctx.db, {
      accountId: batch.accountId,
      amount: -renewal.price,
      reason: "isp_renewal",
      reference: batch.id,
      uniqueKey: renewal.uniqueKey,
      at: renewal.at,
    }),
    ctx.db
      .update(ispBatches)
      .set({
        status: "active",
        periodStart,
        expiresAt,
        graceUntil: null,
        replacementsUsed: 0,
        refreshUsed: false,
        updatedAt: renewal.at,
      })
      .where(eq(ispBatches.id, batch.id)),
    // An ISP subscription follows its batch's period.
    ctx.db
      .update(subscriptions)
      .set({ periodStart, renewsAt: expiresAt, status: "active", pastDueSince: null, updatedAt: renewal.at })
      .where(and(eq(subscriptions.batchId, batch.id), inArray(subscriptions.status, ["active", "past_due"]))),
  ];
}

/** A new batch password, shown once; the old one keeps working for 60 seconds. */
export async function rotateBatchPassword(ctx: DomainContext, principal: Principal, id: string) {
  const batch = await findBatch(ctx, principal, id);
  assertUsable(batch, "rotate the password of", ["provisioning", "active", "grace"]);
  const fresh = await newBatchPassword(ctx.env.SEALING_KEY);
  const at = now();
  await runGuardedBatch(
    ctx.db,
    [
      unchanged(ctx, batch),
      ctx.db
        .update(ispBatches)
        .set({
          passwordSealed: fresh.passwordSealed,
          passwordHash: fresh.passwordHash,
          previousPasswordHash: batch.passwordHash,
          previousPasswordUntil: at + PASSWORD_OVERLAP_MS,
          updatedAt: at,
        })
        .where(eq(ispBatches.id, batch.id)),
    ],
    { state: conflict() },
  );
  return { batch: await findBatch(ctx, principal, id), password: fresh.password };
}

/** Releases the whole batch: its IPs return to the inventory at once; no refund. */
export async function releaseBatch(ctx: DomainContext, principal: Principal, id: string): Promise<BatchRow> {
  const batch = await findBatch(ctx, principal, id);
  assertUsable(batch, "release", ["provisioning", "active", "grace"]);
  await runGuardedBatch(ctx.db, releaseStatements(ctx, batch, now()), { state: conflict() });
  return findBatch(ctx, principal, id);
}

/** Shared by DELETE and the grace-expiry job. */
export function releaseStatements(ctx: DomainContext, batch: BatchRow, at: number): Statement[] {
  return [
    unchanged(ctx, batch),
    releaseStatement(ctx.db, eq(ispIps.batchId, batch.id)),
    ctx.db
      .update(ispBatches)
      .set({ status: "released", releasedAt: at, autoRenew: false, updatedAt: at })
      .where(eq(ispBatches.id, batch.id)),
    ctx.db
      .update(subscriptions)
      .set({ status: "cancelled", archivedAt: at, updatedAt: at })
      .where(
        and(
          eq(subscriptions.batchId, batch.id),
          inArray(subscriptions.status, ["active", "paused", "cancelling", "past_due"]),
        ),
      ),
  ];
}

export interface Replacement {
  replaced: IspIpRow;
  ip: IspIpRow;
  charged_minor: Minor;
  free: boolean;
}

/**
 * Replaces one IP: free within 14 days of purchase, then 10% of the batch (rounded up) per period, then
 * billed at the per-IP monthly rate. The new IP comes from the same geo; the old one returns at once.
 */
export async function replaceIp(
  ctx: DomainContext,
  principal: Principal,
  account: AccountRow,
  request: { ipId: string; reason: string },
): Promise<Replacement> {
  const { ipId, reason } = request;
  assertIspScope(principal);
  const current = await ctx.db
    .select({ ip: ispIps, batch: ispBatches })
    .from(ispIps)
    .innerJoin(ispBatches, eq(ispBatches.id, ispIps.batchId))
    .where(and(eq(ispIps.id, ipId), eq(ispIps.status, "assigned"), eq(ispBatches.accountId, account.id)))
    .get();
  if (!current) throw new ApiError("not_found", "No IP with this id is assigned to one of your batches.");
  const { ip, batch } = current;
  assertUsable(batch, "replace an IP of");

  const at = now();
  const withinFreeWindow = at < batch.purchasedAt + FREE_REPLACEMENT_WINDOW_MS;
  const quotaLeft = batch.replacementsUsed < freeReplacementsPerPeriod(batch.quantity);
  const free = withinFreeWindow || quotaLeft;
  const charge: Minor = free ? 0 : batch.pricePerIpMonthMinor;
  const statements: Statement[] = [
    unchanged(ctx, batch),
    ...swapStatements(ctx, batch, { retire: eq(ispIps.id, ip.id), count: 1, city: ip.city ?? batch.city, at }),
    ctx.db
      .update(ispBatches)
      .set({ replacementsUsed: withinFreeWindow ? batch.replacementsUsed : batch.replacementsUsed + 1, updatedAt: at })
      .where(eq(ispBatches.id, batch.id)),
  ];
  statements.push(
    ctx.db.insert(ipReplacements).values({
      id: newId("replacement", at),
      batchId: batch.id,
      replacedIpId: ip.id,
      reason,
      free,
      chargedMinor: charge,
      createdAt: at,
    }),
  );
  if (charge > 0) {
    statements.push(
      ...movementStatements(ctx.db, {
        accountId: account.id,
        amount: -charge,
        reason: "isp_replacement",
        reference: ip.id,
        at,
      }),
    );
  }
  await runGuardedBatch(ctx.db, statements, { state: conflict(), inventory: new ApiError("insufficient_inventory") });
  if (charge > 0) await accountChanged(ctx, account.id);

  const fresh = await ctx.db
    .select()
    .from(ispIps)
    .where(and(eq(ispIps.batchId, batch.id), eq(ispIps.assignedAt, at)))
    .orderBy(ispIps.id)
    .get();
  return { replaced: ip, ip: fresh as IspIpRow, charged_minor: charge, free };
}

import { and, eq } from "drizzle-orm";
import type { BatchRow, IspIpRow } from "../../db/schema";
import { ipReplacements, ispBatches, ispIps } from "../../db/schema";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { currentAccount } from "../accounts/accounts";
import { type AuditAction, auditStatements } from "../audit/audit-log";
import { movementStatements } from "../billing/ledger";
import type { DomainContext, Principal } from "../context";
import { assertCallerMfa } from "../members/member-mfa";
import { assertInScope } from "../scope";
import { endBatchSubscriptionStatement, followBatchPeriodStatement } from "../subscriptions/statements";
import { commit, type Step } from "../unit-of-work";
import {
  assertBatchUsable,
  batchChanged,
  batchUnchanged,
  FREE_REPLACEMENT_WINDOW_MS,
  findBatch,
  freeReplacementsPerPeriod,
  newBatchPassword,
  PASSWORD_OVERLAP_MS,
  releaseBatchStatements,
  renewBatchStatement,
  renewedPeriod,
  swapIpsStatements,
  updateBatchStatement,
} from "./batches";

/** What the actions on a batch answer when their guarded batch rolls back. */
const batchFailures = {
  state: batchChanged,
  inventory: () => new ApiError("insufficient_inventory"),
};

/** Replaces every IP of the batch, once per billing period; uses up that period's free replacements. */
export async function refreshBatch(ctx: DomainContext, principal: Principal, id: string): Promise<BatchRow> {
  const batch = await findBatch(ctx, principal, id);
  assertBatchUsable(batch, "refresh");
  if (batch.refreshUsed) throw new ApiError("refresh_already_used");
  const at = now();
  await commit(
    ctx,
    [
      batchUnchanged(ctx.db, batch),
      ...swapIpsStatements(ctx.db, batch, { retire: undefined, count: batch.quantity, city: batch.city, at }),
      updateBatchStatement(ctx.db, batch.id, {
        refreshUsed: true,
        replacementsUsed: freeReplacementsPerPeriod(batch.quantity),
        updatedAt: at,
      }),
      ...batchAudit(ctx, batch, "isp_batch.refreshed", { refreshUsed: true }),
    ],
    batchFailures,
  );
  return findBatch(ctx, principal, id);
}

/** An action's audit entry, for its guarded batch (which commits it or nothing). */
function batchAudit(
  ctx: DomainContext,
  batch: BatchRow,
  action: AuditAction,
  after: Record<string, unknown>,
  changedFields: "fields" | "details" = "fields",
): Step[] {
  return auditStatements(ctx, {
    action,
    accountId: batch.accountId,
    resourceId: batch.id,
    products: ["isp"],
    // An action's details (a renewal's months, a replacement's IP) have no previous values.
    before: changedFields === "fields" ? batch : undefined,
    after,
  });
}

export interface Renewal {
  months: number;
  price: Minor;
  at: number;
  /** Set by the auto-renewal job: the same period is never charged twice. */
  uniqueKey: string | null;
}

/**
 * A renewal, shared by `POST …/renew` and the auto-renewal job: the charge, the batch's new period (same IPs,
 * same password), and its ISP subscription following that period.
 */
export function renewalStatements(ctx: DomainContext, batch: BatchRow, renewal: Renewal): Step[] {
  const period = renewedPeriod(batch, renewal.months, renewal.at);
  return [
    batchUnchanged(ctx.db, batch),
    ...movementStatements(ctx.db, {
      accountId: batch.accountId,
      amount: -renewal.price,
      reason: "isp_renewal",
      reference: batch.id,
      uniqueKey: renewal.uniqueKey,
      at: renewal.at,
    }),
    renewBatchStatement(ctx.db, batch, period, renewal.at),
    followBatchPeriodStatement(ctx.db, batch.id, period, renewal.at),
  ];
}

/** Extends the batch by `months` and starts a new billing period. A batch in grace is renewed from now. */
export async function renewBatch(ctx: DomainContext, principal: Principal, id: string, months: number) {
  const batch = await findBatch(ctx, principal, id);
  assertBatchUsable(batch, "renew", ["active", "grace"]);
  const renewal = { months, price: batch.pricePerIpMonthMinor * batch.quantity * months, at: now(), uniqueKey: null };
  await commit(
    ctx,
    [
      ...renewalStatements(ctx, batch, renewal),
      ...batchAudit(ctx, batch, "isp_batch.renewed", { months, chargedMinor: renewal.price }, "details"),
    ],
    batchFailures,
  );
  return findBatch(ctx, principal, id);
}

/** A new batch password, shown once; the old one keeps working for 60 seconds. */
export async function rotateBatchPassword(ctx: DomainContext, principal: Principal, id: string) {
  const batch = await findBatch(ctx, principal, id);
  assertBatchUsable(batch, "rotate the password of", ["provisioning", "active", "grace"]);
  const fresh = await newBatchPassword(ctx.env.SEALING_KEY);
  const at = now();
  const changes = {
    passwordSealed: fresh.passwordSealed,
    passwordHash: fresh.passwordHash,
    previousPasswordHash: batch.passwordHash,
    previousPasswordUntil: at + PASSWORD_OVERLAP_MS,
    updatedAt: at,
  };
  await commit(
    ctx,
    [
      batchUnchanged(ctx.db, batch),
      updateBatchStatement(ctx.db, batch.id, changes),
      ...batchAudit(ctx, batch, "isp_batch.password_rotated", changes),
    ],
    batchFailures,
  );
  return { batch: await findBatch(ctx, principal, id), password: fresh.password };
}

/** Shared by DELETE and the grace-expiry job: the IPs go back, the batch and its subscription end. */
export function releaseStatements(ctx: DomainContext, batch: BatchRow, at: number): Step[] {
  return [
    batchUnchanged(ctx.db, batch),
    ...releaseBatchStatements(ctx.db, batch, at),
    endBatchSubscriptionStatement(ctx.db, batch.id, at),
  ];
}

/** Releases the whole batch at once (no refund): a gated action that needs MFA when it is enabled. */
export async function releaseBatch(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  mfaCode: string | undefined,
): Promise<BatchRow> {
  const batch = await findBatch(ctx, principal, id);
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  assertBatchUsable(batch, "release", ["provisioning", "active", "grace"]);
  await commit(
    ctx,
    [...releaseStatements(ctx, batch, now()), ...batchAudit(ctx, batch, "isp_batch.released", { status: "released" })],
    batchFailures,
  );
  return findBatch(ctx, principal, id);
}

export interface Replacement {
  replaced: IspIpRow;
  ip: IspIpRow;
  chargedMinor: Minor;
  free: boolean;
}

/**
 * Replaces one IP: free within 14 days of purchase, then 10% of the batch (rounded up) per period, then
 * billed at the per-IP monthly rate. The new IP comes from the same geo; the old one returns at once.
 */
export async function replaceIp(
  ctx: DomainContext,
  principal: Principal,
  request: { ipId: string; reason: string },
): Promise<Replacement> {
  assertInScope(principal, ["isp"]);
  const current = await ctx.db
    .select({ ip: ispIps, batch: ispBatches })
    .from(ispIps)
    .innerJoin(ispBatches, eq(ispBatches.id, ispIps.batchId))
    .where(
      and(eq(ispIps.id, request.ipId), eq(ispIps.status, "assigned"), eq(ispBatches.accountId, principal.accountId)),
    )
    .get();
  if (!current) throw new ApiError("not_found", "No IP with this id is assigned to one of your batches.");
  const { ip, batch } = current;
  assertBatchUsable(batch, "replace an IP of");

  const at = now();
  const withinFreeWindow = at < batch.purchasedAt + FREE_REPLACEMENT_WINDOW_MS;
  const free = withinFreeWindow || batch.replacementsUsed < freeReplacementsPerPeriod(batch.quantity);
  const charge: Minor = free ? 0 : batch.pricePerIpMonthMinor;
  await commit(
    ctx,
    [
      batchUnchanged(ctx.db, batch),
      ...swapIpsStatements(ctx.db, batch, { retire: eq(ispIps.id, ip.id), count: 1, city: ip.city ?? batch.city, at }),
      updateBatchStatement(ctx.db, batch.id, {
        replacementsUsed: withinFreeWindow ? batch.replacementsUsed : batch.replacementsUsed + 1,
        updatedAt: at,
      }),
      ctx.db.insert(ipReplacements).values({
        id: newId("replacement", at),
        batchId: batch.id,
        replacedIpId: ip.id,
        reason: request.reason,
        free,
        chargedMinor: charge,
        createdAt: at,
      }),
      ...batchAudit(
        ctx,
        batch,
        "isp_batch.ip_replaced",
        { replacedIpId: ip.id, reason: request.reason, free, chargedMinor: charge },
        "details",
      ),
      ...(charge > 0
        ? movementStatements(ctx.db, {
            accountId: batch.accountId,
            amount: -charge,
            reason: "isp_replacement",
            reference: ip.id,
            at,
          })
        : []),
    ],
    batchFailures,
  );

  const fresh = await ctx.db
    .select()
    .from(ispIps)
    .where(and(eq(ispIps.batchId, batch.id), eq(ispIps.assignedAt, at)))
    .orderBy(ispIps.id)
    .get();
  return { replaced: ip, ip: fresh as IspIpRow, chargedMinor: charge, free };
}

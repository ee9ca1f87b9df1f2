import { and, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { BatchRow, IspIpRow } from "../../db/schema";
import { ispBatches, ispIps, subusers } from "../../db/schema";
import { type Statement, unchangedSince } from "../../db/statements";
import { addMonths, DAY, SECOND } from "../../platform/clock";
import { randomString, seal, sha256Hex, unseal } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import type { DomainContext, Principal } from "../context";
import { ispUsername } from "../gateway/username";
import { assertInScope } from "../scope";
import { allocateStatements, type Geo, releaseStatement } from "./inventory";

/** Replacements are free this long after purchase (spec §4.4). */
export const FREE_REPLACEMENT_WINDOW_MS = 14 * DAY;
/** Afterwards, this share of the batch (rounded up) is free per billing period. */
export const FREE_REPLACEMENT_PERCENT = 10;
/** A cancelled or unpaid batch can still be renewed this long after it expires (spec §8.5). */
export const GRACE_PERIOD_MS = 7 * DAY;
export const PASSWORD_OVERLAP_MS = 60 * SECOND;
const BATCH_PASSWORD_LENGTH = 24;
/** IPs per batch (spec §8.5). */
export const ISP_QUANTITY = { min: 5, max: 5000 } as const;

export function assertIspQuantity(quantity: number): void {
  if (quantity < ISP_QUANTITY.min || quantity > ISP_QUANTITY.max) throw new ApiError("quantity_out_of_range");
}

export function freeReplacementsPerPeriod(quantity: number): number {
  return Math.ceil((quantity * FREE_REPLACEMENT_PERCENT) / 100);
}

/** A batch password: shown in IP lists (so sealed) and checked by the gateway (so hashed). */
export async function newBatchPassword(sealingKey: string) {
  const password = randomString(BATCH_PASSWORD_LENGTH);
  return { password, passwordSealed: await seal(password, sealingKey), passwordHash: await sha256Hex(password) };
}

/** A batch of the caller's account; unknown ids and other accounts' ids are both 404 `not_found`. */
export async function findBatch(ctx: DomainContext, principal: Principal, id: string): Promise<BatchRow> {
  assertInScope(principal, ["isp"]);
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

export function assertBatchUsable(batch: BatchRow, action: string, allowed: BatchRow["status"][] = ["active"]): void {
  if (!allowed.includes(batch.status)) {
    throw new ApiError("batch_not_active", `Cannot ${action} a batch that is ${batch.status}.`);
  }
}

export function listBatches(ctx: DomainContext, principal: Principal, query: PageQuery) {
  assertInScope(principal, ["isp"]);
  const page = keysetPage(ispBatches.id, query);
  return ctx.db
    .select()
    .from(ispBatches)
    .where(and(eq(ispBatches.accountId, principal.accountId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

export function batchIps(ctx: DomainContext, batchId: string): Promise<IspIpRow[]> {
  return ctx.db
    .select()
    .from(ispIps)
    .where(and(eq(ispIps.batchId, batchId), eq(ispIps.status, "assigned")))
    .orderBy(ispIps.ip);
}

/**
 * A batch's assigned IPs as proxy entries: each IP on its own port with the batch's user and (unsealed) password.
 * 404 for another account's batch, 403 outside the key's scope.
 */
export async function batchProxies(ctx: DomainContext, principal: Principal, id: string) {
  const batch = await findBatch(ctx, principal, id);
  const { user, password } = await batchCredentials(ctx, batch);
  const entries = (await batchIps(ctx, batch.id)).map((ip) => ({
    ipId: ip.id,
    host: ip.ip,
    port: ip.port,
    username: user,
    password,
    columns: { country: ip.country, city: ip.city, asn: ip.asn },
  }));
  return { batch, entries };
}

/** The proxy credentials shared by every IP of the batch: `{prefix}_{sub-user name}` and the batch password. */
export async function batchCredentials(ctx: DomainContext, batch: BatchRow) {
  const subuser = await ctx.db
    .select({ name: subusers.name })
    .from(subusers)
    .where(eq(subusers.id, batch.subuserId))
    .get();
  return {
    user: ispUsername(ctx.env.GATEWAY_USER_PREFIX, subuser?.name ?? ""),
    password: await unseal(batch.passwordSealed, ctx.env.SEALING_KEY),
  };
}

// ── Statements on the ISP tables, for the guarded batches that compose them ────────────────────────

export const batchChanged = () => new ApiError("batch_changed", "The batch changed meanwhile; retry the request.");

export function batchUnchanged(db: Database, batch: BatchRow): Statement {
  return unchangedSince(db, ispBatches, batch);
}

export function insertBatchStatement(db: Database, batch: typeof ispBatches.$inferInsert): Statement {
  return db.insert(ispBatches).values(batch);
}

export function updateBatchStatement(db: Database, batchId: string, changes: Partial<BatchRow>): Statement {
  return db.update(ispBatches).set(changes).where(eq(ispBatches.id, batchId));
}

function geoOf(batch: BatchRow, city: string | null = batch.city): Geo {
  return { accountId: batch.accountId, country: batch.country, city, asn: batch.asn };
}

/**
 * Swaps IPs of a batch (all, or those matching `retire`) for fresh ones of the same geo; the retired IPs return
 * to the inventory at once. The batch aborts with `inventory` if the geo cannot supply them.
 */
export function swapIpsStatements(
  db: Database,
  batch: BatchRow,
  swap: { retire: SQL | undefined; count: number; city: string | null; at: number },
): Statement[] {
  const retiring = `${batch.id}:retiring`;
  return [
    db
      .update(ispIps)
      .set({ batchId: retiring })
      .where(and(eq(ispIps.batchId, batch.id), swap.retire)),
    ...allocateStatements(db, {
      ...geoOf(batch, swap.city),
      batchId: batch.id,
      quantity: swap.count,
      status: "assigned",
      expectedTotal: batch.quantity,
      at: swap.at,
    }),
    releaseStatement(db, eq(ispIps.batchId, retiring)),
  ];
}

/** The new period of a renewal: an active batch extends from its end; one in grace starts now (its IPs stopped). */
export function renewedPeriod(batch: BatchRow, months: number, at: number) {
  const periodStart = batch.status === "grace" ? at : batch.expiresAt;
  return { periodStart, expiresAt: addMonths(periodStart, months) };
}

export function renewBatchStatement(
  db: Database,
  batch: BatchRow,
  period: { periodStart: number; expiresAt: number },
  at: number,
) {
  return updateBatchStatement(db, batch.id, {
    status: "active",
    ...period,
    graceUntil: null,
    replacementsUsed: 0,
    refreshUsed: false,
    updatedAt: at,
  });
}

/** The IPs return to the inventory at once and the batch is released; no refund. */
export function releaseBatchStatements(db: Database, batch: BatchRow, at: number): Statement[] {
  return [
    releaseStatement(db, eq(ispIps.batchId, batch.id)),
    updateBatchStatement(db, batch.id, { status: "released", releasedAt: at, autoRenew: false, updatedAt: at }),
  ];
}

/** Provisioning finishes: the reserved IPs become the batch's and the batch is active. */
export function activateBatchStatements(db: Database, batch: BatchRow, at: number): Statement[] {
  return [
    db
      .update(ispIps)
      .set({ status: "assigned", assignedAt: at })
      .where(and(eq(ispIps.batchId, batch.id), eq(ispIps.status, "reserved"))),
    updateBatchStatement(db, batch.id, { status: "active", updatedAt: at }),
  ];
}

/** The batch's period ended unpaid: its IPs stop working for the 7-day grace period. */
export function enterGraceStatement(db: Database, batch: BatchRow, at: number): Statement {
  return db
    .update(ispBatches)
    .set({ status: "grace", graceUntil: batch.expiresAt + GRACE_PERIOD_MS, updatedAt: at })
    .where(
      and(eq(ispBatches.id, batch.id), eq(ispBatches.status, "active"), eq(ispBatches.expiresAt, batch.expiresAt)),
    );
}

/** More IPs for a batch now (reserved while it is still provisioning). */
export function growBatchStatements(db: Database, batch: BatchRow, quantity: number, at: number): Statement[] {
  return [
    ...allocateStatements(db, {
      ...geoOf(batch),
      batchId: batch.id,
      quantity: quantity - batch.quantity,
      status: batch.status === "provisioning" ? "reserved" : "assigned",
      expectedTotal: quantity,
      at,
    }),
    updateBatchStatement(db, batch.id, { quantity, updatedAt: at }),
  ];
}

/** Fewer IPs at renewal: the most recently assigned go back first. */
export function shrinkBatchStatements(db: Database, batchId: string, keep: number): Statement[] {
  const surplus = db
    .select({ id: ispIps.id })
    .from(ispIps)
    .where(eq(ispIps.batchId, batchId))
    .orderBy(sql`${ispIps.assignedAt} DESC, ${ispIps.id} DESC`)
    .limit(ISP_QUANTITY.max)
    .offset(keep);
  return [
    releaseStatement(db, inArray(ispIps.id, surplus)),
    db.update(ispBatches).set({ quantity: keep }).where(eq(ispBatches.id, batchId)),
  ];
}

import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import {
  type AccountRow,
  type Product,
  type SpikeAction,
  type SpikeSettingValue,
  type SubuserRow,
  type SubuserStatus,
  subusers,
  type TargetRules,
} from "../../db/schema";
import { anyCap, type CapBytes } from "../../platform/cap-periods";
import { now, SECOND } from "../../platform/clock";
import { randomString, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { currentAccount } from "../accounts/accounts";
import { type AuditAction, auditStatements, commitAudited } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertInScope, idIn, productsInScope, reaches, subusersReached } from "../scope";
import { settleUsage } from "../traffic/settlement";
import { accountStores } from "../traffic/store";
import { commit } from "../unit-of-work";
import { removeScopeStatement } from "../whitelists/store";
import { syncGate } from "./gate-sync";
import { capsFor, defaultLimits } from "./limits";

/** A replaced password keeps working this long after a rotation (spec §4.2). */
export const PASSWORD_OVERLAP_MS = 60 * SECOND;
const PASSWORD_LENGTH = 32;
const NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/**
 * Generated gateway names start with `s` for live sub-users and `t` for sandbox ones: the two never collide, and
 * the gateway contract refuses sandbox names like unknown ones (sandbox traffic is simulated, never routed).
 */
const NAME_PREFIX = { live: "s", sandbox: "t" } as const;

export interface NewSubuser {
  label: string;
  products: Product[];
  concurrentMax?: number;
  rpsMax?: number;
  /** Monthly (UTC) traffic cap in bytes; null or omitted: none. */
  trafficLimitBytes?: number | null;
  /** Caps per UTC day and over the sub-user's life, in bytes; null or omitted: none. */
  dailyLimitBytes?: number | null;
  lifetimeLimitBytes?: number | null;
  /** Where its requests may go; null or omitted: anywhere. */
  targetRules?: TargetRules | null;
  /** From then on its requests are refused (ms, in the future); null or omitted: never. */
  expiresAt?: number | null;
  /** `subuser.new_source` events for this sub-user (default false). */
  alertOnNewSource?: boolean;
  /** Spike alerts' sensitivity or off (default medium), and their action (default none). */
  spikeSensitivity?: SpikeSettingValue;
  spikeAction?: SpikeAction;
}

export interface SubuserPatch {
  label?: string;
  status?: SubuserStatus;
  concurrentMax?: number;
  rpsMax?: number;
  trafficLimitBytes?: number | null;
  dailyLimitBytes?: number | null;
  lifetimeLimitBytes?: number | null;
  targetRules?: TargetRules | null;
  expiresAt?: number | null;
  alertOnNewSource?: boolean;
  spikeSensitivity?: SpikeSettingValue;
  spikeAction?: SpikeAction;
}

/** An expiry must lie ahead: a sub-user is stopped now by disabling it. */
function assertExpiryAhead(expiresAt: number | null | undefined): void {
  if (expiresAt != null && expiresAt <= now()) {
    const message = "expires_at: must be in the future (disable the sub-user to stop it now).";
    throw new ApiError("invalid_request", message, { details: [{ field: "expires_at", message }] });
  }
}

function assertWithinPlan(account: AccountRow, products: Product[], concurrentMax: number, rpsMax: number): void {
  const caps = capsFor(account.plan, account.limits, products);
  if (caps.concurrent !== null && concurrentMax > caps.concurrent) {
    throw overPlanLimit(account, "concurrent_max", caps.concurrent, concurrentMax);
  }
  if (caps.rps !== null && rpsMax > caps.rps) throw overPlanLimit(account, "rps_max", caps.rps, rpsMax);
}

function overPlanLimit(account: AccountRow, field: string, limit: number, current: number): ApiError {
  return new ApiError(
    "over_plan_limit",
    `${field}: the ${account.plan} plan allows at most ${limit} for these products.`,
    {
      limit: { limit, current, raisedBy: "a higher plan, or a custom limit set by support" },
    },
  );
}

function newPassword(): string {
  return randomString(PASSWORD_LENGTH);
}

export async function createSubuser(
  ctx: DomainContext,
  principal: Principal,
  input: NewSubuser,
): Promise<{ subuser: SubuserRow; password: string }> {
  assertInScope(principal, input.products);
  const account = await currentAccount(ctx, principal);
  if (account.plan === "trial" && input.products.includes("isp")) {
    throw new ApiError("feature_not_in_plan", "ISP is not available on the trial plan.");
  }
  const defaults = defaultLimits(account.plan, account.limits, input.products);
  const concurrentMax = input.concurrentMax ?? defaults.concurrent;
  const rpsMax = input.rpsMax ?? defaults.rps;
  assertWithinPlan(account, input.products, concurrentMax, rpsMax);
  assertExpiryAhead(input.expiresAt);

  const password = newPassword();
  const passwordHash = await sha256Hex(password);
  const at = now();
  for (let attempt = 0; ; attempt++) {
    const row = {
      id: newId("subuser", at),
      accountId: account.id,
      name: `${principal.livemode ? NAME_PREFIX.live : NAME_PREFIX.sandbox}${randomString(10, NAME_ALPHABET)}`,
      label: input.label,
      products: input.products,
      status: "active" as const,
      concurrentMax,
      rpsMax,
      trafficLimitBytes: input.trafficLimitBytes ?? null,
      dailyLimitBytes: input.dailyLimitBytes ?? null,
      lifetimeLimitBytes: input.lifetimeLimitBytes ?? null,
      targetRules: input.targetRules ?? null,
      expiresAt: input.expiresAt ?? null,
      alertOnNewSource: input.alertOnNewSource ?? false,
      spikeSensitivity: input.spikeSensitivity ?? "medium",
      spikeAction: input.spikeAction ?? "none",
      passwordHash,
      createdAt: at,
      updatedAt: at,
    };
    try {
      const [subuser] = await commitAudited(ctx, ctx.db.insert(subusers).values(row).returning(), {
        action: "subuser.created",
        accountId: account.id,
        resourceId: row.id,
        products: row.products,
        after: row,
      });
      await syncGate(ctx, row.name);
      // A meter started before the sub-user existed meters its caps only once told.
      if (anyCap(capsOf(row))) await tellMeter(ctx, subuser as SubuserRow);
      if (row.spikeSensitivity !== "medium") await pushSpikeSetting(ctx, subuser as SubuserRow);
      return { subuser: subuser as SubuserRow, password };
    } catch (error) {
      if (isUniqueViolation(error, "subusers.label")) throw new ApiError("label_taken");
      // A generated name collided with an existing one (never reused): draw another.
      if (!isUniqueViolation(error, "subusers.name") || attempt >= 4) throw error;
    }
  }
}

export interface SubuserFilters extends PageQuery {
  product?: Product;
  status?: SubuserStatus;
  labelContains?: string;
  /** Only these sub-users (of those the key reaches). */
  ids?: string[];
}

export async function listSubusers(ctx: DomainContext, principal: Principal, filters: SubuserFilters) {
  const page = keysetPage(subusers.id, filters);
  const conditions: Array<SQL | undefined> = [
    eq(subusers.accountId, principal.accountId),
    isNull(subusers.deletedAt),
    page.where,
    filters.status ? eq(subusers.status, filters.status) : undefined,
    filters.labelContains ? sql`instr(${subusers.label}, ${filters.labelContains}) > 0` : undefined,
    filters.ids ? idIn(subusers.id, filters.ids) : undefined,
    filters.product
      ? sql`EXISTS (SELECT 1 FROM json_each(${subusers.products}) WHERE value = ${filters.product})`
      : undefined,
    productsInScope(principal, subusers.products),
    subusersReached(principal, subusers.id),
  ];
  return ctx.db
    .select()
    .from(subusers)
    .where(and(...conditions))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * A live sub-user of the caller's account that the key may manage. Unknown ids, other accounts' ids and
 * deleted sub-users all answer 404 `subuser_not_found`.
 */
export async function findSubuser(ctx: DomainContext, principal: Principal, id: string): Promise<SubuserRow> {
  const subuser = await findAccountSubuser(ctx, principal, id);
  assertInScope(principal, subuser.products);
  return subuser;
}

/**
 * A live sub-user of the caller's account, named to filter a product's resources (traffic, the request log,
 * sessions): the route has checked the key covers that product, which is all those resources need. 404 as above,
 * and for a sub-user a bound key does not reach: to it, the others do not exist.
 */
export async function findAccountSubuser(ctx: DomainContext, principal: Principal, id: string): Promise<SubuserRow> {
  const subuser =
    isId("subuser", id) && reaches(principal, id)
      ? await ctx.db
          .select()
          .from(subusers)
          .where(and(eq(subusers.id, id), eq(subusers.accountId, principal.accountId), isNull(subusers.deletedAt)))
          .get()
      : undefined;
  if (!subuser) throw new ApiError("subuser_not_found");
  return subuser;
}

/**
 * The labels of some of an account's sub-users, deleted ones included (their last label: a new sub-user may have
 * taken it since), in one read of the ids asked for; an id the account never had is absent.
 */
export async function subuserLabels(
  ctx: DomainContext,
  accountId: string,
  ids: string[],
): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await ctx.db
    .select({ id: subusers.id, label: subusers.label })
    .from(subusers)
    .where(and(idIn(subusers.id, [...new Set(ids)]), eq(subusers.accountId, accountId)))
    .all();
  return new Map(rows.map((row) => [row.id, row.label]));
}

/**
 * Live sub-users of the caller's account that the key manages (its product scope, its binding), by id: each id that
 * is none of them answers like an unknown one, 404 `subuser_not_found` naming it. Duplicates count once.
 */
export async function findSubusers(ctx: DomainContext, principal: Principal, ids: string[]): Promise<SubuserRow[]> {
  const wanted = [...new Set(ids)];
  const found = await ctx.db
    .select()
    .from(subusers)
    .where(
      and(
        idIn(subusers.id, wanted),
        eq(subusers.accountId, principal.accountId),
        isNull(subusers.deletedAt),
        productsInScope(principal, subusers.products),
        subusersReached(principal, subusers.id),
      ),
    );
  const missing = wanted.find((id) => !found.some((subuser) => subuser.id === id));
  if (missing !== undefined) throw new ApiError("subuser_not_found", `No sub-user ${missing} exists.`);
  return wanted.map((id) => found.find((subuser) => subuser.id === id) as SubuserRow);
}

export async function updateSubuser(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  patch: SubuserPatch,
): Promise<SubuserRow> {
  const subuser = await findSubuser(ctx, principal, id);
  const concurrentMax = patch.concurrentMax ?? subuser.concurrentMax;
  const rpsMax = patch.rpsMax ?? subuser.rpsMax;
  if (patch.concurrentMax !== undefined || patch.rpsMax !== undefined) {
    assertWithinPlan(await currentAccount(ctx, principal), subuser.products, concurrentMax, rpsMax);
  }
  const changes: Partial<typeof subusers.$inferInsert> = { updatedAt: now(), concurrentMax, rpsMax };
  if (patch.label !== undefined) changes.label = patch.label;
  // A status the customer sets is theirs: no traffic-spike episode's acknowledgement undoes it.
  if (patch.status !== undefined) Object.assign(changes, { status: patch.status, spikeDisabledBy: null });
  if (patch.trafficLimitBytes !== undefined) changes.trafficLimitBytes = patch.trafficLimitBytes;
  if (patch.dailyLimitBytes !== undefined) changes.dailyLimitBytes = patch.dailyLimitBytes;
  if (patch.lifetimeLimitBytes !== undefined) changes.lifetimeLimitBytes = patch.lifetimeLimitBytes;
  if (patch.targetRules !== undefined) changes.targetRules = patch.targetRules;
  assertExpiryAhead(patch.expiresAt);
  if (patch.expiresAt !== undefined) changes.expiresAt = patch.expiresAt;
  if (patch.alertOnNewSource !== undefined) changes.alertOnNewSource = patch.alertOnNewSource;
  if (patch.spikeSensitivity !== undefined) changes.spikeSensitivity = patch.spikeSensitivity;
  if (patch.spikeAction !== undefined) changes.spikeAction = patch.spikeAction;
  let updated: SubuserRow;
  try {
    updated = await writeSubuser(ctx, subuser, "subuser.updated", changes);
  } catch (error) {
    if (isUniqueViolation(error, "subusers.label")) throw new ApiError("label_taken");
    throw error;
  }
  await syncGate(ctx, updated.name);
  const capChanged = [patch.trafficLimitBytes, patch.dailyLimitBytes, patch.lifetimeLimitBytes].some(
    (cap) => cap !== undefined,
  );
  if (capChanged) await tellMeter(ctx, updated);
  if (patch.spikeSensitivity !== undefined && patch.spikeSensitivity !== subuser.spikeSensitivity) {
    await pushSpikeSetting(ctx, updated);
  }
  return updated;
}

/** Writes a live sub-user's row with its audit entry; 404 if it was deleted meanwhile. */
async function writeSubuser(
  ctx: DomainContext,
  subuser: SubuserRow,
  action: AuditAction,
  changes: Partial<typeof subusers.$inferInsert>,
): Promise<SubuserRow> {
  const [written] = await commitAudited(
    ctx,
    ctx.db
      .update(subusers)
      .set(changes)
      .where(and(eq(subusers.id, subuser.id), isNull(subusers.deletedAt)))
      .returning(),
    { ...subuserEntry(subuser, action), before: subuser, after: changes },
  );
  if (!written) throw new ApiError("subuser_not_found");
  return written;
}

/** A new password, shown once; the replaced one keeps working for 60 seconds. */
export async function rotateSubuserPassword(
  ctx: DomainContext,
  principal: Principal,
  id: string,
): Promise<{ subuser: SubuserRow; password: string }> {
  const subuser = await findSubuser(ctx, principal, id);
  const password = newPassword();
  const at = now();
  const changes = {
    passwordHash: await sha256Hex(password),
    previousPasswordHash: subuser.passwordHash,
    previousPasswordUntil: at + PASSWORD_OVERLAP_MS,
    updatedAt: at,
  };
  const updated = await writeSubuser(ctx, subuser, "subuser.password_rotated", changes);
  await syncGate(ctx, updated.name);
  return { subuser: updated, password };
}

/** Irreversible: the sub-user disappears, its whitelist goes, its name is never used again. */
export async function deleteSubuser(ctx: DomainContext, principal: Principal, id: string): Promise<SubuserRow> {
  const subuser = await findSubuser(ctx, principal, id);
  const at = now();
  const deletion = { deletedAt: at, updatedAt: at };
  await commit(ctx, [
    ctx.db
      .update(subusers)
      .set(deletion)
      .where(and(eq(subusers.id, subuser.id), isNull(subusers.deletedAt))),
    ...auditStatements(ctx, {
      ...subuserEntry(subuser, "subuser.deleted"),
      before: subuser,
      after: deletion,
      ifChanged: true,
    }),
    removeScopeStatement(ctx.db, "subuser", subuser.id),
  ]);
  await syncGate(ctx, subuser.name);
  await tellMeter(ctx, { ...subuser, deletedAt: at });
  return subuser;
}

function subuserEntry(subuser: SubuserRow, action: AuditAction) {
  return { action, accountId: subuser.accountId, resourceId: subuser.id, products: subuser.products };
}

/**
 * The account's usage meter hears of a cap change or a deletion at once: a sub-user that gains a cap is metered from
 * its month, day and lifetime so far, and a period already over a cap just set or lowered is settled at once (the
 * gate then refuses); a deleted one's usage stops counting after the drain.
 */
async function tellMeter(ctx: DomainContext, subuser: SubuserRow): Promise<void> {
  const stores = await accountStores(ctx, subuser.accountId);
  const due = await stores.learnFigures({
    subusers: [{ subuserId: subuser.id, caps: capsOf(subuser), deletedAt: subuser.deletedAt }],
  });
  await Promise.all(due.map(({ shard, settlement }) => settleUsage(ctx, subuser.accountId, shard, settlement)));
}

function capsOf(subuser: Pick<SubuserRow, "trafficLimitBytes" | "dailyLimitBytes" | "lifetimeLimitBytes">): CapBytes {
  return { month: subuser.trafficLimitBytes, day: subuser.dailyLimitBytes, lifetime: subuser.lifetimeLimitBytes };
}

/** The sub-user's traffic store hears of its spike setting (a call per change: detection runs there, per bucket). */
async function pushSpikeSetting(ctx: DomainContext, subuser: SubuserRow): Promise<void> {
  const stores = await accountStores(ctx, subuser.accountId);
  await stores.storeOf(subuser.id).configureSpikes(subuser.id, subuser.spikeSensitivity);
}

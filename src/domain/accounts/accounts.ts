import { and, eq, isNull, lt, or } from "drizzle-orm";
import { accountAtRevision } from "../../db/account-cache";
import { isUniqueViolation } from "../../db/errors";
import {
  type AccountRow,
  accounts,
  type BillingAddress,
  type KycStatus,
  type LimitOverrides,
  type Plan,
} from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { syncAccountGuards } from "../api-keys/api-keys";
import { auditStatements } from "../audit/audit-log";
import { movementStatements } from "../billing/ledger";
import type { DomainContext, Principal } from "../context";
import { assertCallerMfa } from "../members/member-mfa";
import { syncAccountMembers } from "../members/members";
import { mirrorPlanToSandbox } from "../sandbox/twins";
import { syncAccountGates } from "../subusers/gate-sync";
import { commit, type Step } from "../unit-of-work";
import { accountUpdate, recordedAccountUpdate } from "./account-writes";
import { billingAddressProblem, normalizeTaxId, taxIdProblem } from "./tax-jurisdiction";

export async function findAccount(ctx: DomainContext, accountId: string): Promise<AccountRow> {
  const account = await ctx.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  return account;
}

/** The caller's account, read at the revision its key's guard reported for this request (cached per isolate). */
export function currentAccount(ctx: DomainContext, principal: Principal): Promise<AccountRow> {
  return accountAtRevision(ctx.db, principal.accountId, revisionOf(principal));
}

function revisionOf(principal: Principal): string {
  return `${principal.guardId}|${principal.accountRevision}`;
}

export interface NewAccount {
  email: string;
  plan: Plan;
  company: string | null;
  kycStatus: KycStatus;
  balanceMinor: Minor;
}

export async function createAccount(ctx: DomainContext, input: NewAccount): Promise<AccountRow> {
  await assertEmailFree(ctx, input.email);
  const at = now();
  const id = newId("account", at);
  const { balanceMinor, ...fields } = input;
  const statements: Step[] = [
    ctx.db.insert(accounts).values({ id, ...fields, createdAt: at, updatedAt: at }),
    ...auditStatements(ctx, { action: "account.created", accountId: id, resourceId: id, after: input }),
  ];
  if (balanceMinor > 0) {
    statements.push(
      ...movementStatements(ctx.db, { accountId: id, amount: balanceMinor, reason: "initial_credit", at }),
    );
  }
  await withUniqueEmail(() => commit(ctx, statements));
  return findAccount(ctx, id);
}

export function listAccounts(ctx: DomainContext, query: PageQuery & { email?: string }) {
  const page = keysetPage(accounts.id, query);
  return ctx.db
    .select()
    .from(accounts)
    .where(and(page.where, query.email ? eq(accounts.email, query.email) : undefined))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

async function assertEmailFree(ctx: DomainContext, email: string, exceptAccountId?: string): Promise<void> {
  const holder = await ctx.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).get();
  if (holder && holder.id !== exceptAccountId) throw new ApiError("email_in_use");
}

/** Two concurrent writes of one email: the UNIQUE index decides. */
async function withUniqueEmail<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, "accounts.email")) throw new ApiError("email_in_use");
    throw error;
  }
}

export async function creditAccount(
  ctx: DomainContext,
  accountId: string,
  amount: Minor,
  reason: string,
): Promise<AccountRow> {
  await findAccount(ctx, accountId);
  await commit(ctx, [
    ...movementStatements(ctx.db, { accountId, amount, reason, at: now() }),
    ...auditStatements(ctx, {
      action: "account.credited",
      accountId,
      resourceId: accountId,
      after: { amountMinor: amount, reason },
    }),
  ]);
  return findAccount(ctx, accountId);
}

/** Fields the account holder may change (spec §2.1). */
export interface ProfilePatch {
  company?: string | null;
  billingAddress?: BillingAddress | null;
  taxId?: string | null;
  defaultCurrency?: string;
  notificationEmail?: string | null;
}

/**
 * Updates the profile. Changing the billing address or tax id is a gated action: with MFA enabled it needs
 * `mfaCode`, which is checked only once the patch itself is valid, so a doomed request never spends a code.
 */
export async function updateProfile(
  ctx: DomainContext,
  principal: Principal,
  patch: ProfilePatch,
  mfaCode: string | undefined,
): Promise<AccountRow> {
  const account = await currentAccount(ctx, principal);
  assertValidProfile(account, patch);
  if (patch.billingAddress !== undefined || patch.taxId !== undefined)
    await assertCallerMfa(ctx, principal, account, mfaCode);
  const changes: Partial<AccountRow> = { updatedAt: now() };
  if (patch.company !== undefined) changes.company = patch.company;
  if (patch.billingAddress !== undefined) changes.billingAddress = patch.billingAddress;
  if (patch.taxId !== undefined) changes.taxId = patch.taxId === null ? null : normalizeTaxId(patch.taxId);
  if (patch.defaultCurrency !== undefined) changes.defaultCurrency = patch.defaultCurrency;
  if (patch.notificationEmail !== undefined) changes.notificationEmail = patch.notificationEmail;
  await commit(ctx, recordedAccountUpdate(ctx, account, "account.updated", changes));
  return findAccount(ctx, account.id);
}

/** Throws `invalid_billing_address` when the patch would leave address or tax id failing jurisdiction rules. */
function assertValidProfile(account: AccountRow, patch: ProfilePatch): void {
  const address = patch.billingAddress === undefined ? account.billingAddress : patch.billingAddress;
  if (patch.billingAddress) {
    const problem = billingAddressProblem(patch.billingAddress);
    if (problem) throw new ApiError("invalid_billing_address", problem);
  }
  const taxId = patch.taxId === undefined ? account.taxId : patch.taxId;
  if (taxId && (patch.taxId !== undefined || patch.billingAddress !== undefined)) {
    const problem = taxIdProblem(taxId, address?.country ?? null);
    if (problem) throw new ApiError("invalid_billing_address", problem);
  }
}

/** Fields operators may change through the admin API. */
export interface AdminAccountPatch {
  plan?: Plan;
  kycStatus?: KycStatus;
  email?: string;
  riskReview?: boolean;
  company?: string | null;
  limits?: LimitOverrides | null;
}

export async function adminUpdateAccount(
  ctx: DomainContext,
  accountId: string,
  patch: AdminAccountPatch,
): Promise<AccountRow> {
  const account = await findAccount(ctx, accountId);
  if (patch.email !== undefined) await assertEmailFree(ctx, patch.email, accountId);
  const changes = { ...patch, updatedAt: now() };
  await withUniqueEmail(() => commit(ctx, recordedAccountUpdate(ctx, account, "account.updated", changes)));
  // Plan and limits are enforced by the keys' guards and the sub-users' gates: push them before answering.
  if (patch.plan !== undefined || patch.limits !== undefined) {
    await Promise.all([
      syncAccountGuards(ctx, accountId),
      syncAccountMembers(ctx, accountId),
      syncAccountGates(ctx, accountId),
      mirrorPlanToSandbox(ctx, accountId, patch),
    ]);
  }
  return findAccount(ctx, accountId);
}

/**
 * Records the latest authenticated call. The key's guard asks for this at most once a minute;
 * the WHERE clause keeps several keys of one account from writing more often than that.
 */
export async function recordLogin(ctx: DomainContext, accountId: string, ip: string | null): Promise<void> {
  const at = now();
  await commit(ctx, [
    accountUpdate(
      ctx.db,
      accountId,
      { lastLoginAt: at, lastLoginIp: ip },
      or(isNull(accounts.lastLoginAt), lt(accounts.lastLoginAt, at - MINUTE)),
    ),
  ]);
}

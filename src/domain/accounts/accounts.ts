import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Database } from "../../db/client";
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
import { syncAccountGuards } from "../api-keys/api-keys";
import { movementStatements } from "../billing/ledger";
import type { DomainContext } from "../context";
import { syncAccountGates } from "../subusers/gate-sync";
import { accountChanged } from "./account-cache";
import { billingAddressProblem, normalizeTaxId, taxIdProblem } from "./tax-jurisdiction";

export async function findAccount(db: Database, accountId: string): Promise<AccountRow> {
  const account = await db.select().from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  return account;
}

export interface NewAccount {
  email: string;
  plan: Plan;
  company: string | null;
  kycStatus: KycStatus;
  balanceMinor: Minor;
}

export async function createAccount(db: Database, input: NewAccount): Promise<AccountRow> {
  await assertEmailFree(db, input.email);
  const at = now();
  const id = newId("account", at);
  const insert = db.insert(accounts).values({
    id,
    email: input.email,
    plan: input.plan,
    company: input.company,
    kycStatus: input.kycStatus,
    createdAt: at,
    updatedAt: at,
  });
  try {
    if (input.balanceMinor > 0) {
      await db.batch([
        insert,
        ...movementStatements(db, { accountId: id, amount: input.balanceMinor, reason: "initial_credit", at }),
      ]);
    } else {
      await insert;
    }
  } catch (error) {
    // Two concurrent creations with one email: the UNIQUE index decides.
    if (isUniqueViolation(error, "accounts.email")) throw new ApiError("email_in_use");
    throw error;
  }
  return findAccount(db, id);
}

async function assertEmailFree(db: Database, email: string, exceptAccountId?: string): Promise<void> {
  const holder = await db.select({ id: accounts.id }).from(accounts).where(eq(accounts.email, email)).get();
  if (holder && holder.id !== exceptAccountId) throw new ApiError("email_in_use");
}

export async function creditAccount(
  ctx: DomainContext,
  accountId: string,
  amount: Minor,
  reason: string,
): Promise<AccountRow> {
  await findAccount(ctx.db, accountId);
  await ctx.db.batch(movementStatements(ctx.db, { accountId, amount, reason, at: now() }));
  await accountChanged(ctx, accountId);
  return findAccount(ctx.db, accountId);
}

/** Fields the account holder may change (spec §2.1). */
export interface ProfilePatch {
  company?: string | null;
  billing_address?: BillingAddress | null;
  tax_id?: string | null;
  default_currency?: string;
  notification_email?: string | null;
}

/** Throws `invalid_billing_address` when the patch would leave address or tax id failing jurisdiction rules. */
export function validateProfilePatch(account: AccountRow, patch: ProfilePatch): void {
  const address = patch.billing_address === undefined ? account.billingAddress : patch.billing_address;
  if (patch.billing_address) {
    const problem = billingAddressProblem(patch.billing_address);
    if (problem) throw new ApiError("invalid_billing_address", problem);
  }
  const taxId = patch.tax_id === undefined ? account.taxId : patch.tax_id;
  if (taxId && (patch.tax_id !== undefined || patch.billing_address !== undefined)) {
    const problem = taxIdProblem(taxId, address?.country ?? null);
    if (problem) throw new ApiError("invalid_billing_address", problem);
  }
}

export async function updateProfile(ctx: DomainContext, account: AccountRow, patch: ProfilePatch): Promise<AccountRow> {
  validateProfilePatch(account, patch);
  const changes: Partial<typeof accounts.$inferInsert> = { updatedAt: now() };
  if (patch.company !== undefined) changes.company = patch.company;
  if (patch.billing_address !== undefined) changes.billingAddress = patch.billing_address;
  if (patch.tax_id !== undefined) changes.taxId = patch.tax_id === null ? null : normalizeTaxId(patch.tax_id);
  if (patch.default_currency !== undefined) changes.defaultCurrency = patch.default_currency;
  if (patch.notification_email !== undefined) changes.notificationEmail = patch.notification_email;
  await ctx.db.update(accounts).set(changes).where(eq(accounts.id, account.id));
  await accountChanged(ctx, account.id);
  return findAccount(ctx.db, account.id);
}

/** Fields operators may change through the admin API. */
export interface AdminAccountPatch {
  plan?: Plan;
  kyc_status?: KycStatus;
  email?: string;
  risk_review?: boolean;
  company?: string | null;
  limits?: LimitOverrides | null;
}

export async function adminUpdateAccount(
  ctx: DomainContext,
  accountId: string,
  patch: AdminAccountPatch,
): Promise<AccountRow> {
  const { db } = ctx;
  await findAccount(db, accountId);
  if (patch.email !== undefined) await assertEmailFree(db, patch.email, accountId);
  const changes: Partial<typeof accounts.$inferInsert> = { updatedAt: now() };
  if (patch.plan !== undefined) changes.plan = patch.plan;
  if (patch.kyc_status !== undefined) changes.kycStatus = patch.kyc_status;
  if (patch.email !== undefined) changes.email = patch.email;
  if (patch.risk_review !== undefined) changes.riskReview = patch.risk_review;
  if (patch.company !== undefined) changes.company = patch.company;
  if (patch.limits !== undefined) changes.limits = patch.limits;
  try {
    await db.update(accounts).set(changes).where(eq(accounts.id, accountId));
  } catch (error) {
    if (isUniqueViolation(error, "accounts.email")) throw new ApiError("email_in_use");
    throw error;
  }
  // Plan and limits are enforced by the keys' guards: push them before answering.
  if (patch.plan !== undefined || patch.limits !== undefined) {
    await Promise.all([syncAccountGuards(db, ctx.env, accountId), syncAccountGates(ctx, accountId)]);
  }
  await accountChanged(ctx, accountId);
  return findAccount(db, accountId);
}

/**
 * Records the latest authenticated call. The key's guard asks for this at most once a minute;
 * the WHERE clause keeps several keys of one account from writing more often than that.
 */
export async function recordLogin(ctx: DomainContext, accountId: string, ip: string | null): Promise<void> {
  const at = now();
  const updated = await ctx.db
    .update(accounts)
    .set({ lastLoginAt: at, lastLoginIp: ip })
    .where(and(eq(accounts.id, accountId), or(isNull(accounts.lastLoginAt), lt(accounts.lastLoginAt, at - MINUTE))))
    .returning({ id: accounts.id });
  if (updated.length > 0) await accountChanged(ctx, accountId);
}

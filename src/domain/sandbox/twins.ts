import { eq } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { type AccountRow, accounts, type LimitOverrides, type Plan, sandboxAccounts } from "../../db/schema";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import { type Minor, toMinor } from "../../platform/money";
import { accountUpdate } from "../accounts/account-writes";
import { syncAccountGuards } from "../api-keys/api-keys";
import { movementStatements } from "../billing/ledger";
import type { DomainContext, Principal } from "../context";
import { syncAccountGates } from "../subusers/gate-sync";
import { commit, type Step } from "../unit-of-work";

/**
 * The sandbox: a `test_` key acts on the sandbox twin of its account, a separate account row linked to the live
 * one and created with the first test key. Every query already filters by account id, so sandbox and live data
 * never meet. Money there is simulated: the twin opens with this balance and test helpers top it up.
 */
export const SANDBOX_OPENING_BALANCE_MINOR: Minor = toMinor(1000);

/** The twin's email: unique, never deliverable (RFC 2606 `.invalid`), and telling whose twin it is. */
function twinEmail(liveAccountId: string): string {
  return `${liveAccountId.toLowerCase()}@sandbox.invalid`;
}

async function readAccount(ctx: DomainContext, accountId: string): Promise<AccountRow | undefined> {
  return ctx.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
}

/** The id of the live account's sandbox twin, if it has one. */
export async function sandboxTwinIdOf(ctx: DomainContext, liveAccountId: string): Promise<string | undefined> {
  const row = await ctx.db
    .select({ id: sandboxAccounts.sandboxAccountId })
    .from(sandboxAccounts)
    .where(eq(sandboxAccounts.liveAccountId, liveAccountId))
    .get();
  return row?.id;
}

/** Whether an account is a sandbox twin. */
export async function isSandboxAccount(ctx: DomainContext, accountId: string): Promise<boolean> {
  const row = await ctx.db
    .select({ id: sandboxAccounts.liveAccountId })
    .from(sandboxAccounts)
    .where(eq(sandboxAccounts.sandboxAccountId, accountId))
    .get();
  return row !== undefined;
}

/** A live account for the admin API: unknown ids are 404, a sandbox twin's id is refused (keys go on live ones). */
export async function findLiveAccount(ctx: DomainContext, accountId: string): Promise<AccountRow> {
  const account = await readAccount(ctx, accountId);
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  if (await isSandboxAccount(ctx, accountId)) {
    const message = "id: this is a sandbox twin; issue keys on its live account (mode test for a sandbox key).";
    throw new ApiError("invalid_request", message, { details: [{ field: "id", message }] });
  }
  return account;
}

/**
 * The live account's sandbox twin, created on first use: the live plan and limits, KYC approved, the opening
 * balance credited through the ledger. Two concurrent first uses create one twin (the link's primary key decides).
 */
export async function sandboxTwinOf(ctx: DomainContext, live: AccountRow): Promise<AccountRow> {
  const existing = await sandboxTwinIdOf(ctx, live.id);
  if (existing) return (await readAccount(ctx, existing)) as AccountRow;
  const at = now();
  const id = newId("account", at);
  const statements: Step[] = [
    ctx.db.insert(accounts).values({
      id,
      email: twinEmail(live.id),
      company: live.company,
      plan: live.plan,
      limits: live.limits,
      kycStatus: "approved",
      createdAt: at,
      updatedAt: at,
    }),
    ctx.db.insert(sandboxAccounts).values({ liveAccountId: live.id, sandboxAccountId: id, createdAt: at }),
    ...movementStatements(ctx.db, {
      accountId: id,
      amount: SANDBOX_OPENING_BALANCE_MINOR,
      reason: "sandbox_opening_balance",
      at,
    }),
  ];
  try {
    await commit(ctx, statements);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
  }
  const twinId = (await sandboxTwinIdOf(ctx, live.id)) as string;
  return (await readAccount(ctx, twinId)) as AccountRow;
}

/** The twin follows its live account's plan and limits: pushed to the twin's keys and gates before answering. */
export async function mirrorPlanToSandbox(
  ctx: DomainContext,
  liveAccountId: string,
  patch: { plan?: Plan; limits?: LimitOverrides | null },
): Promise<void> {
  if (patch.plan === undefined && patch.limits === undefined) return;
  const twinId = await sandboxTwinIdOf(ctx, liveAccountId);
  if (!twinId) return;
  const changes = {
    ...(patch.plan === undefined ? {} : { plan: patch.plan }),
    ...(patch.limits === undefined ? {} : { limits: patch.limits }),
  };
  await commit(ctx, [accountUpdate(ctx.db, twinId, { ...changes, updatedAt: now() })]);
  await Promise.all([syncAccountGuards(ctx, twinId), syncAccountGates(ctx, twinId)]);
}

/** Test helpers act only in the sandbox: a live key gets 403 `sandbox_key_required`. */
export function assertSandbox(principal: Principal): void {
  if (principal.livemode) throw new ApiError("sandbox_key_required");
}

/** Simulated money: credits the twin's balance through the ledger, like any credit. */
export async function topUpSandbox(ctx: DomainContext, principal: Principal, amount: Minor): Promise<AccountRow> {
  assertSandbox(principal);
  const movement = { accountId: principal.accountId, amount, reason: "sandbox_top_up", at: now() };
  await commit(ctx, movementStatements(ctx.db, movement));
  return (await readAccount(ctx, principal.accountId)) as AccountRow;
}

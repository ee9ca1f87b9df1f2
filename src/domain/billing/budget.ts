import { eq } from "drizzle-orm";
import { accounts, type SpendBudgetRow, spendBudgets } from "../../db/schema";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { fromMinor, type Minor } from "../../platform/money";
import { currentAccount } from "../accounts/accounts";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertCallerMfa } from "../members/member-mfa";
import { assertAccountWide } from "../scope";
import { commit } from "../unit-of-work";
import { type BudgetMonth, budgetMonth, budgetThresholdEvents, monthSpendSql } from "./spend";

/** The thresholds a budget gets when none are given (percent of the amount). */
export const DEFAULT_BUDGET_THRESHOLDS = [50, 80, 100];

export interface BudgetInput {
  amountMinor: Minor;
  thresholds: number[];
  hardStop: boolean;
}

/** The account's budget (null: none set) and the month's spend so far. */
export interface BudgetStanding {
  budget: SpendBudgetRow | null;
  spentMinor: Minor;
  month: BudgetMonth;
}

/** The budget spans every product of the account: a product-scoped key may not read or change it. */
function assertAccountWideKey(principal: Principal): void {
  assertAccountWide(principal, "The budget covers the spend of every product of the account");
}

export async function getBudget(ctx: DomainContext, principal: Principal): Promise<BudgetStanding> {
  assertAccountWideKey(principal);
  return budgetStanding(ctx, principal.accountId, budgetMonth(now()));
}

async function budgetStanding(ctx: DomainContext, accountId: string, month: BudgetMonth): Promise<BudgetStanding> {
  const row = await ctx.db
    .select({ budget: spendBudgets, spentMinor: monthSpendSql(accountId, month) })
    .from(accounts)
    .leftJoin(spendBudgets, eq(spendBudgets.accountId, accounts.id))
    .where(eq(accounts.id, accountId))
    .get();
  return { budget: row?.budget ?? null, spentMinor: row?.spentMinor ?? 0, month };
}

/**
 * Sets the budget (MFA when enabled: a leaked key must not lift the cap that limits it). Thresholds the month's
 * spend has already reached under the new amount are reported at once, in the same batch.
 */
export async function setBudget(
  ctx: DomainContext,
  principal: Principal,
  input: BudgetInput,
  mfaCode: string | undefined,
): Promise<BudgetStanding> {
  assertAccountWideKey(principal);
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  const at = now();
  const settings = { amountMinor: input.amountMinor, thresholds: input.thresholds, hardStop: input.hardStop };
  await commit(ctx, [
    ctx.db
      .insert(spendBudgets)
      .values({ accountId: principal.accountId, ...settings, createdAt: at, updatedAt: at })
      .onConflictDoUpdate({ target: spendBudgets.accountId, set: { ...settings, updatedAt: at } }),
    budgetThresholdEvents(ctx.db, principal.accountId, at),
    ...auditStatements(ctx, {
      action: "budget.set",
      accountId: principal.accountId,
      resourceId: principal.accountId,
      after: settings,
    }),
  ]);
  return budgetStanding(ctx, principal.accountId, budgetMonth(at));
}

/** Removes the budget: no thresholds, no hard stop. Removing none is not an error (the state asked for holds). */
export async function deleteBudget(
  ctx: DomainContext,
  principal: Principal,
  mfaCode: string | undefined,
): Promise<void> {
  assertAccountWideKey(principal);
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  await commit(ctx, [
    ctx.db.delete(spendBudgets).where(eq(spendBudgets.accountId, principal.accountId)),
    ...auditStatements(ctx, {
      action: "budget.deleted",
      accountId: principal.accountId,
      resourceId: principal.accountId,
      ifChanged: true,
    }),
  ]);
}

/** The thresholds (percent) that `spent` has reached of `amount`. */
export function thresholdsReached(spent: Minor, amount: Minor, thresholds: readonly number[]): number[] {
  return thresholds.filter((threshold) => spent * 100 >= amount * threshold);
}

/**
 * 409 `budget_exceeded` with the figures: the budget, the month's spend and the charge refused (null: unknown).
 * Read after the rollback, so the spend is as it stands now.
 */
export async function budgetRefusal(ctx: DomainContext, accountId: string, price: Minor | null): Promise<ApiError> {
  return refusal(await budgetStanding(ctx, accountId, budgetMonth(now())), price);
}

/** The refusal a charge of `price` would meet now from a hard-stop budget, or null (a quote's check). */
export async function budgetCheck(ctx: DomainContext, accountId: string, price: Minor): Promise<ApiError | null> {
  const standing = await budgetStanding(ctx, accountId, budgetMonth(now()));
  const budget = standing.budget;
  if (!budget?.hardStop || standing.spentMinor + price <= budget.amountMinor) return null;
  return refusal(standing, price);
}

function refusal(standing: BudgetStanding, price: Minor | null): ApiError {
  const amount = standing.budget?.amountMinor ?? 0;
  const usd = (minor: Minor) => `${fromMinor(minor).toFixed(2)} USD`;
  const charge = price === null ? "this charge" : `this charge of ${usd(price)}`;
  return new ApiError(
    "budget_exceeded",
    `The monthly budget is ${usd(amount)} with ${usd(standing.spentMinor)} spent in ${standing.month.month} ` +
      `(UTC): ${charge} would pass it, and its hard stop is on.`,
    {
      limit: { limit: fromMinor(amount), current: fromMinor(standing.spentMinor), raisedBy: "PUT /v1/budget" },
    },
  );
}

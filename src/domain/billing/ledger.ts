import { eq, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../../db/client";
import { isCheckViolation, isUniqueViolation } from "../../db/errors";
import { type AssertionKind, accounts, batchAssertions, ledgerEntries } from "../../db/schema";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";

export type Statement = BatchItem<"sqlite">;

export interface Movement {
  accountId: string;
  /** Positive: credit; negative: debit. */
  amount: Minor;
  reason: string;
  reference?: string | null;
  /** For charges made by jobs: a second charge with the same key fails, and so does its whole batch. */
  uniqueKey?: string | null;
  at: number;
}

/**
 * One movement of money: a ledger entry and the balance change, to run in the same D1 batch as whatever the
 * money is for. The balance's CHECK (≥ 0) makes an overdraft abort the whole batch, so the balance always
 * equals the sum of the ledger and never goes negative.
 */
export function movementStatements(db: Database, movement: Movement): [Statement, Statement] {
  return [
    db.insert(ledgerEntries).values({
      id: newId("ledgerEntry", movement.at),
      accountId: movement.accountId,
      amountMinor: movement.amount,
      reason: movement.reason,
      reference: movement.reference ?? null,
      uniqueKey: movement.uniqueKey ?? null,
      createdAt: movement.at,
    }),
    db
      .update(accounts)
      .set({ balanceMinor: sql`${accounts.balanceMinor} + ${movement.amount}`, updatedAt: movement.at })
      .where(eq(accounts.id, movement.accountId)),
  ];
}

/**
 * A statement that aborts its batch when `condition` holds. A batch cannot read and then decide, so what must
 * be true (enough IPs reserved, a row still in the expected state) is asserted in SQL, each kind with its own CHECK.
 */
export function abortIf(db: Database, kind: AssertionKind, condition: SQL): Statement {
  // An insert builder, not `db.run`: drizzle's D1 batch cannot bind the parameters of raw statements.
  return db.insert(batchAssertions).select(sql`SELECT ${kind} AS failed WHERE ${condition}`);
}

/**
 * Runs a D1 batch whose guards (the balance CHECK, `abortIf` assertions, unique charge keys) may abort it, all or
 * nothing. An overdraft is 409 `insufficient_balance`; a failed assertion
 * is the error given for its kind; a job charge already made (same unique key) returns false; the rest rethrows.
 */
export async function runGuardedBatch(
  db: Database,
  statements: Statement[],
  assertionErrors: Partial<Record<AssertionKind, ApiError>> = {},
): Promise<boolean> {
  try {
    await db.batch(statements as [Statement, ...Statement[]]);
    return true;
  } catch (error) {
    if (isCheckViolation(error, "accounts_balance_non_negative")) throw new ApiError("insufficient_balance");
    for (const [kind, failure] of Object.entries(assertionErrors)) {
      if (isCheckViolation(error, `assert_${kind}`)) throw failure;
    }
    if (isUniqueViolation(error, "ledger_entries.unique_key")) return false;
    throw error;
  }
}

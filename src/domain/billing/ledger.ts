import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { accounts, ledgerEntries } from "../../db/schema";
import { newId } from "../../platform/ids";
import type { Minor } from "../../platform/money";
import { accountUpdate } from "../accounts/account-writes";
import type { Step } from "../unit-of-work";
import { budgetStatements, lowBalanceStatements, SPEND_REASONS } from "./spend";

export interface Movement {
  accountId: string;
  /** Positive: credit; negative: debit. An SQL expression when the amount is priced in the batch itself. */
  amount: Minor | SQL;
  reason: string;
  reference?: string | null;
  /** For charges made by jobs: a second charge with the same key fails, and so does its whole batch. */
  uniqueKey?: string | null;
  at: number;
}

/**
 * One movement of money: a ledger entry and the balance change, to run in the same unit of work as whatever
 * the money is for. The balance's CHECK (≥ 0) makes an overdraft abort the whole batch, so the balance always
 * equals the sum of the ledger and never goes negative. The balance lives on the account row but belongs to
 * the ledger: nothing else writes it. A charge (a spend reason) also meets the account's budget in the same batch:
 * its hard stop and its thresholds. Every movement then holds the balance against the next 7 days' need
 * (`balance.low`).
 */
export function movementStatements(db: Database, movement: Movement): Step[] {
  const entry = db.insert(ledgerEntries).values({
    id: newId("ledgerEntry", movement.at),
    accountId: movement.accountId,
    amountMinor: movement.amount,
    reason: movement.reason,
    reference: movement.reference ?? null,
    uniqueKey: movement.uniqueKey ?? null,
    createdAt: movement.at,
  });
  return [
    entry,
    accountUpdate(db, movement.accountId, {
      balanceMinor: sql`${accounts.balanceMinor} + ${movement.amount}`,
      updatedAt: movement.at,
    }),
    ...(SPEND_REASONS.has(movement.reason) ? budgetStatements(db, movement.accountId, movement.at) : []),
    ...lowBalanceStatements(db, movement.accountId, movement.at, movement.reference ?? null),
  ];
}

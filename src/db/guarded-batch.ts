import { inArray, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DomainContext } from "../domain/context";
import { ApiError } from "../platform/errors";
import { accountsChanged } from "./account-cache";
import type { Database } from "./client";
import { isCheckViolation, isUniqueViolation } from "./errors";
import { type AccountRow, type AssertionKind, accounts, apiKeys, batchAssertions } from "./schema";

export type Statement = BatchItem<"sqlite">;

/**
 * Why a guarded batch rolled back: the balance would have gone negative, an `abortIf` assertion held, or a charge
 * with the same unique key was already made (a job running twice).
 */
export type BatchFailure = "insufficient_balance" | AssertionKind | "already_charged";
export type BatchOutcome = { committed: true; results: unknown[] } | { committed: false; failure: BatchFailure };

/**
 * A statement that aborts its batch when `condition` holds. A batch cannot read and then decide, so what must
 * be true (enough IPs reserved, a row still in the expected state) is asserted in SQL, each kind with its own CHECK.
 */
export function abortIf(db: Database, kind: AssertionKind, condition: SQL): Statement {
  // An insert builder, not `db.run`: drizzle's D1 batch cannot bind the parameters of raw statements.
  return db.insert(batchAssertions).select(sql`SELECT ${kind} AS failed WHERE ${condition}`);
}

/** Aborts the batch (failure `state`) unless the row is still as it was read: a concurrent change wins. */
export function unchangedSince(
  db: Database,
  table: SQLiteTable & { id: SQLiteColumn; updatedAt: SQLiteColumn },
  row: { id: string; updatedAt: number },
): Statement {
  return abortIf(
    db,
    "state",
    sql`NOT EXISTS (SELECT 1 FROM ${table} WHERE ${table.id} = ${row.id} AND ${table.updatedAt} = ${row.updatedAt})`,
  );
}

const accountWrites = new WeakMap<object, string>();
const commitHooks = new WeakMap<object, (ctx: DomainContext, result: unknown) => Promise<void>>();

/**
 * Runs `hook` with the statement's result once the batch that holds it has committed (e.g. a pool's new figures,
 * read with RETURNING, tell the gates whether it is used up). Hooks must be idempotent.
 */
export function afterCommit<S extends Statement>(
  statement: S,
  hook: (ctx: DomainContext, result: S["_"]["result"]) => Promise<void>,
): S {
  commitHooks.set(statement, hook as (ctx: DomainContext, result: unknown) => Promise<void>);
  return statement;
}

/** Marks a statement that writes an account row: a batch that runs it invalidates the account's cached reads. */
export function writesAccount<S extends Statement>(statement: S, accountId: string): S {
  accountWrites.set(statement, accountId);
  return statement;
}

/**
 * Runs a D1 batch, all or nothing, and says why it rolled back when one of its guards fired (the balance
 * CHECK, an `abortIf` assertion, a unique charge key). Any other error is thrown. After a commit, accounts the
 * batch wrote have their cached reads invalidated everywhere before this returns (`accountsChanged`); the rows
 * and their keys are read in the same batch, so that costs no extra round trip.
 */
export async function runGuardedBatch(ctx: DomainContext, statements: Statement[]): Promise<BatchOutcome> {
  const accountIds = [...new Set(statements.flatMap((statement) => accountWrites.get(statement) ?? []))];
  // The written accounts as they are after the batch, and their keys: read in the batch, at no extra trip.
  const afterwards =
    accountIds.length > 0
      ? [
          ctx.db.select().from(accounts).where(inArray(accounts.id, accountIds)),
          ctx.db
            .select({ id: apiKeys.id, accountId: apiKeys.accountId })
            .from(apiKeys)
            .where(inArray(apiKeys.accountId, accountIds)),
        ]
      : [];
  let results: unknown[];
  try {
    results = await ctx.db.batch([...statements, ...afterwards] as [Statement, ...Statement[]]);
  } catch (error) {
    const failure = batchFailure(error);
    if (failure) return { committed: false, failure };
    throw error;
  }
  if (accountIds.length > 0) {
    const [changed, keys] = results.slice(-2) as [AccountRow[], Array<{ id: string; accountId: string }>];
    await accountsChanged(ctx, changed, keys);
  }
  for (const [index, statement] of statements.entries()) {
    const hook = commitHooks.get(statement);
    if (hook) await hook(ctx, results[index]);
  }
  return { committed: true, results: results.slice(0, statements.length) };
}

/**
 * `runGuardedBatch` for API verbs: a rollback becomes the error given for its failure (an overdraft is always
 * 409 `insufficient_balance`).
 */
export async function commit(
  ctx: DomainContext,
  statements: Statement[],
  errors: Partial<Record<BatchFailure, () => ApiError>> = {},
): Promise<unknown[]> {
  const outcome = await runGuardedBatch(ctx, statements);
  if (outcome.committed) return outcome.results;
  const failure = errors[outcome.failure] ?? defaultErrors[outcome.failure];
  if (!failure) throw new Error(`Guarded batch rolled back (${outcome.failure}) with no error given for it.`);
  throw failure();
}

const defaultErrors: Partial<Record<BatchFailure, () => ApiError>> = {
  insufficient_balance: () => new ApiError("insufficient_balance"),
};

function batchFailure(error: unknown): BatchFailure | null {
  if (isCheckViolation(error, "accounts_balance_non_negative")) return "insufficient_balance";
  for (const kind of ["inventory", "state", "quota"] as const) {
    if (isCheckViolation(error, `assert_${kind}`)) return kind;
  }
  if (isUniqueViolation(error, "ledger_entries.unique_key")) return "already_charged";
  return null;
}

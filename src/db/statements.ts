import { getTableColumns, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { firstIdAt, type IdKind } from "../platform/ids";
import type { Database } from "./client";
import { isCheckViolation, isUniqueViolation } from "./errors";
import { type AssertionKind, assertionKinds, batchAssertions } from "./schema";

/** One statement of a D1 batch. */
export type Statement = BatchItem<"sqlite">;

/**
 * Why a guarded batch rolled back: the balance would have gone negative, an `abortIf` assertion held (`budget`: the
 * month's spend would pass a hard-stop budget), or a charge with the same unique key was already made (a job
 * running twice).
 */
export type BatchFailure = "insufficient_balance" | AssertionKind | "already_charged";

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

/** Which guard rolled a batch back (the balance CHECK, an `abortIf` assertion, a unique charge key), if one did. */
export function batchFailure(error: unknown): BatchFailure | null {
  if (isCheckViolation(error, "accounts_balance_non_negative")) return "insufficient_balance";
  for (const kind of assertionKinds) {
    if (isCheckViolation(error, `assert_${kind}`)) return kind;
  }
  if (isUniqueViolation(error, "ledger_entries.unique_key")) return "already_charged";
  return null;
}

/**
 * An INSERT of one whole row that happens only while `condition` holds, decided inside the statement, so no
 * concurrent write can slip between a check and the insert (a count below a limit; the batch's previous statement
 * having changed a row). The values are bound in the table's column order, each as its column stores it.
 */
export function insertWhere<T extends SQLiteTable>(db: Database, table: T, row: T["$inferSelect"], condition: SQL) {
  const values = Object.entries(getTableColumns(table)).map(([field, column]) => {
    const value = (row as Record<string, unknown>)[field];
    return value === null || value === undefined ? sql`NULL` : sql`${column.mapToDriverValue(value)}`;
  });
  return db.insert(table).select(sql`SELECT ${sql.join(values, sql`, `)} WHERE ${condition}`);
}

/** Rows deleted per pruning statement, so one cron run never holds D1 for long; the next run takes the rest. */
const PRUNE_CHUNK = 1000;

/**
 * Deletes the oldest rows made before `cutoff` (ms), a chunk at a time, from a table whose ids are ULIDs of their
 * creation time: the id range is an index scan. Returns how many rows went.
 */
export async function pruneMadeBefore(
  db: Database,
  table: SQLiteTable & { id: SQLiteColumn },
  kind: IdKind,
  cutoff: number,
): Promise<number> {
  const oldest = sql`SELECT ${table.id} FROM ${table} WHERE ${table.id} < ${firstIdAt(kind, cutoff)}
    ORDER BY ${table.id} LIMIT ${PRUNE_CHUNK}`;
  const result = await db.delete(table).where(sql`${table.id} IN (${oldest})`);
  return result.meta.changes;
}

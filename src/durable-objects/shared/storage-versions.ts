/**
 * Numbered schema steps for a Durable Object's SQLite storage (docs/storage.md, "Storage versions").
 *
 * Each storage area — a class owning some tables, several of which may share one object's database — has an ordered
 * list of steps; step `n` brings the area to version `n`. `_storage_versions` holds one row per area with the last
 * version applied. `migrate` runs the steps above it in order, each in one transaction with its version's row, so a
 * step is applied once or not at all; an area at its latest version costs one read and runs no DDL. (Durable
 * Objects refuse `PRAGMA user_version`, and areas sharing a database need a version each: hence the table.)
 *
 * Steps are never edited once shipped (storage in production may be at any earlier version): a change of schema is a
 * new step at the end of its area's list.
 */

/** What an area needs of its object's storage: its SQL, and a transaction for each step. */
export interface AreaStorage {
  readonly sql: SqlStorage;
  transactionSync<T>(closure: () => T): T;
}

/** One schema step: DDL, and whatever converts rows of the form before it. */
export type StorageStep = (sql: SqlStorage) => void;

const VERSIONS_TABLE = "_storage_versions";

/**
 * Brings `area` to version `steps.length`, running each step not applied yet, in order. Returns the version the
 * area was at before. Storage at a higher version than `steps` knows (code rolled back) is left as it is.
 */
export function migrate(storage: AreaStorage, area: string, steps: readonly StorageStep[]): number {
  const { sql } = storage;
  const applied = appliedVersion(sql, area);
  for (const [index, step] of steps.entries()) {
    const version = index + 1;
    if (version <= applied) continue;
    storage.transactionSync(() => {
      step(sql);
      sql.exec(
        `INSERT INTO ${VERSIONS_TABLE} (area, version) VALUES (?, ?)
         ON CONFLICT (area) DO UPDATE SET version = excluded.version`,
        area,
        version,
      );
    });
  }
  return applied;
}

/** The area's version: 0 when it has none yet (the versions table is created on first use). */
function appliedVersion(sql: SqlStorage, area: string): number {
  try {
    return (
      sql.exec<{ version: number }>(`SELECT version FROM ${VERSIONS_TABLE} WHERE area = ?`, area).toArray()[0]
        ?.version ?? 0
    );
  } catch (error) {
    // Storage from before versions has no table yet; any other failure is real.
    const exists = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", VERSIONS_TABLE);
    if (exists.toArray().length > 0) throw error;
    sql.exec(`CREATE TABLE ${VERSIONS_TABLE} (area TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID`);
    return 0;
  }
}

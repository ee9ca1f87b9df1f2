import { DatabaseSync, type SQLInputValue } from "node:sqlite";

/**
 * A Durable Object's `SqlStorage`, as much of it as the store's code uses, over `node:sqlite` — and a meter of
 * the rows it writes, counted the way Durable Objects bill them. Measured in workerd (`cursor.rowsWritten`): an
 * inserted row counts once for its table and once for each index of it (a rowid table's text primary key is an
 * index), an updated row once (its indexes too when an indexed column changes, which no store statement does), a
 * deleted row once, an ignored insert not at all. Triggers count inserts, updates and deletes per table; the
 * indexes are read from the schema. Rows read are counted as the rows statements return plus the rows they write
 * (a write reads its row): a lower bound of what the platform counts (a scan reads rows it does not return), stated
 * as such; at $0.001 per million they are priced, not decisive.
 */
export class NodeSqlStorage {
  readonly db: DatabaseSync;
  readonly #written = new Map<string, { inserted: number; updated: number; deleted: number }>();
  #counting = false;
  #rowsReturned = 0;

  constructor() {
    this.db = new DatabaseSync(":memory:");
  }

  /** The object's storage as its storage areas take it (`AreaStorage`): this SQL, and its transactions. */
  get sql(): this {
    return this;
  }

  transactionSync<T>(closure: () => T): T {
    this.db.exec("BEGIN");
    try {
      const result = closure();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  exec<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): Cursor<T> {
    if (bindings.length === 0 && /;\s*\S/.test(query.trim().replace(/;\s*$/, ""))) {
      this.db.exec(query);
      return new Cursor<T>([]);
    }
    const rows = this.db.prepare(query).all(...(bindings as SQLInputValue[])) as T[];
    this.#rowsReturned += rows.length;
    return new Cursor<T>(rows);
  }

  /** Starts counting rows written (once every table exists). */
  countWrites(): void {
    if (this.#counting) return;
    this.#counting = true;
    this.#rowsReturned = 0;
    this.db.function("count_write", (table, kind) => {
      const counts = this.#written.get(String(table)) ?? { inserted: 0, updated: 0, deleted: 0 };
      if (kind === "i") counts.inserted++;
      else if (kind === "u") counts.updated++;
      else counts.deleted++;
      this.#written.set(String(table), counts);
      return null;
    });
    for (const { name } of this.#tables()) {
      for (const [event, kind] of [
        ["INSERT", "i"],
        ["UPDATE", "u"],
        ["DELETE", "d"],
      ]) {
        this.db.exec(
          `CREATE TEMP TRIGGER "count_${name}_${kind}" AFTER ${event} ON main."${name}"
           BEGIN SELECT count_write('${name}', '${kind}'); END`,
        );
      }
    }
  }

  /** Rows written since counting began, as billed, per table and in all. */
  rowsWritten(): { total: number; byTable: Record<string, number> } {
    const byTable: Record<string, number> = {};
    let total = 0;
    for (const [table, counts] of this.#written) {
      const rows = counts.inserted * (1 + this.#indexes(table)) + counts.updated + counts.deleted;
      byTable[table] = rows;
      total += rows;
    }
    return { total, byTable };
  }

  /** Rows read since counting began (see the class's note). */
  rowsRead(): number {
    return this.#rowsReturned + this.rowsWritten().total;
  }

  resetCounts(): void {
    this.#written.clear();
    this.#rowsReturned = 0;
  }

  /** Bytes of the database's pages (as stored). */
  bytes(): number {
    const row = this.db
      .prepare("SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()")
      .get();
    return Number(row?.bytes ?? 0);
  }

  /** Rows per table. */
  rowCounts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const { name } of this.#tables()) {
      counts[name] = Number(this.db.prepare(`SELECT count(*) AS n FROM "${name}"`).get()?.n ?? 0);
    }
    return counts;
  }

  #tables(): Array<{ name: string }> {
    return this.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as Array<{ name: string }>;
  }

  readonly #indexCounts = new Map<string, number>();

  /** Indexes a row of the table is written to besides the table itself. */
  #indexes(table: string): number {
    let count = this.#indexCounts.get(table);
    if (count === undefined) {
      const withoutRowid = /WITHOUT\s+ROWID/i.test(
        String(this.db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").get(table)?.sql ?? ""),
      );
      const indexes = this.db.prepare(`PRAGMA index_list("${table}")`).all() as Array<{ origin: string }>;
      count = indexes.filter((index) => !(withoutRowid && index.origin === "pk")).length;
      this.#indexCounts.set(table, count);
    }
    return count;
  }
}

class Cursor<T> implements Iterable<T> {
  readonly #rows: T[];

  constructor(rows: T[]) {
    this.#rows = rows;
  }

  toArray(): T[] {
    return this.#rows;
  }

  one(): T {
    const [row] = this.#rows;
    if (row === undefined) throw new Error("Expected exactly one row.");
    return row;
  }

  [Symbol.iterator](): Iterator<T> {
    return this.#rows[Symbol.iterator]();
  }
}

import { performance } from "node:perf_hooks";
import type { DatabaseSync, SQLInputValue } from "node:sqlite";

/**
 * A `D1Database` binding over a `node:sqlite` database, as much of it as drizzle's D1 driver uses (`prepare`,
 * `bind`, `all`, `raw`, `first`, `run`, `batch`, `withSession`), so the product's own queries run in the simulation. It counts
 * the rows its reads return (a lower bound of rows read: an index seek reads its index entry too) and the SQLite
 * time spent, which is D1's, not the Worker's.
 */
export class NodeD1 {
  rowsRead = 0;
  queries = 0;
  sqliteMs = 0;
  #replica: NodeD1 | null = null;
  readonly db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.db = db;
  }

  /**
   * A session: the primary for `first-primary`, else a read replica, here the same database with counts of its own
   * (the replica's time is not the primary's).
   */
  withSession(constraint?: string): NodeD1 {
    if (constraint === "first-primary") return this;
    this.#replica ??= new NodeD1(this.db);
    return this.#replica;
  }

  /** The read replica's counts (zero until a session used it). */
  get replica(): NodeD1 {
    return this.withSession("first-unconstrained");
  }

  prepare(query: string): NodeD1Statement {
    return new NodeD1Statement(this, query, []);
  }

  async batch(statements: NodeD1Statement[]): Promise<Array<{ results: unknown[] }>> {
    this.db.exec("BEGIN");
    try {
      const results = statements.map((statement) => statement.allSync());
      this.db.exec("COMMIT");
      return results;
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Runs `query` with `params`, timed and counted. */
  execute(query: string, params: unknown[]): { rows: Record<string, unknown>[]; changes: number } {
    const begin = performance.now();
    const statement = this.db.prepare(query);
    const reads = statement.columns().length > 0;
    const bound = params as SQLInputValue[];
    const rows = reads ? (statement.all(...bound) as Record<string, unknown>[]) : [];
    const changes = reads ? 0 : Number(statement.run(...bound).changes);
    this.sqliteMs += performance.now() - begin;
    this.queries++;
    this.rowsRead += rows.length;
    return { rows, changes };
  }
}

class NodeD1Statement {
  readonly d1: NodeD1;
  readonly query: string;
  readonly params: unknown[];

  constructor(d1: NodeD1, query: string, params: unknown[]) {
    this.d1 = d1;
    this.query = query;
    this.params = params;
  }

  bind(...params: unknown[]): NodeD1Statement {
    return new NodeD1Statement(this.d1, this.query, params);
  }

  allSync(): { results: unknown[]; meta: { changes: number } } {
    const { rows, changes } = this.d1.execute(this.query, this.params);
    return { results: rows, meta: { changes } };
  }

  async all(): Promise<{ results: unknown[]; meta: { changes: number } }> {
    return this.allSync();
  }

  async run(): Promise<{ results: unknown[]; meta: { changes: number } }> {
    return this.allSync();
  }

  async first(): Promise<unknown> {
    return this.allSync().results[0] ?? null;
  }

  async raw(): Promise<unknown[][]> {
    return this.d1.execute(this.query, this.params).rows.map((row) => Object.values(row));
  }
}

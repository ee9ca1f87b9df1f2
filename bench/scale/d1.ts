import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { drizzle } from "drizzle-orm/d1";
import * as schema from "../../src/db/schema";
import type { Statement } from "../../src/db/statements";
import { settlementBatch } from "../../src/domain/traffic/settlement";
import { statementOf } from "../../src/domain/unit-of-work";
import type { Settlement } from "../../src/durable-objects/traffic-store/contract";
import { NodeD1 } from "./d1-binding";
import { NodeSqlStorage } from "./node-sql";

/**
 * D1 under the settlements: the real migrations on `node:sqlite`, loaded with the fleet's accounts and pools and
 * its capped sub-users, and the real settlement statements (the domain's `settlementBatch`, rendered to SQL by
 * drizzle) timed and their rows counted. SQLite time only: D1 adds its round trip and commit to each batch.
 */
export interface D1Costs {
  /** SQLite ms of one settlement batch: pools only, and with `months` capped sub-users' months. */
  settlementMs: (months: number) => number;
  /** Rows a settlement writes (as billed), likewise. */
  settlementRows: (months: number) => number;
}

/** An empty D1 database on `node:sqlite`: the project's migrations, applied in order. */
export function migratedDatabase(root: string): NodeSqlStorage {
  const d1 = new NodeSqlStorage();
  const dir = path.join(root, "migrations");
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith(".sql"))
    .sort()) {
    for (const statement of readFileSync(path.join(dir, file), "utf8").split("--> statement-breakpoint")) {
      if (statement.trim()) d1.db.exec(statement);
    }
  }
  return d1;
}

/**
 * The D1 database the usage route reads owners from: migrated, holding the sub-users `add` is given (names the
 * simulated gateway reports), behind a D1 binding the product's queries run on.
 */
export function ownersDatabase(root: string) {
  const d1 = migratedDatabase(root);
  const account = d1.db.prepare(
    "INSERT OR IGNORE INTO accounts (id, email, plan, created_at, updated_at) VALUES (?, ?, 'pro', 0, 0)",
  );
  const insert = d1.db.prepare(
    `INSERT OR IGNORE INTO subusers (id, account_id, name, label, products, concurrent_max, rps_max, password_hash,
       traffic_limit_bytes, created_at, updated_at) VALUES (?, ?, ?, ?, '["residential"]', 200, 200, 'x', NULL, 0, 0)`,
  );
  return {
    binding: new NodeD1(d1.db),
    add(owners: Array<{ subuserId: string; accountId: string; gateName: string }>) {
      for (const owner of owners) {
        account.run(owner.accountId, `${owner.accountId}@example.com`);
        insert.run(owner.subuserId, owner.accountId, owner.gateName, owner.gateName);
      }
    },
  };
}

export function measureD1(root: string, accounts: number, cappedPerAccount: number, samples: number): D1Costs {
  const d1 = migratedDatabase(root);
  const { db } = d1;
  const at = Date.UTC(2026, 10, 24, 12, 0, 0);
  db.exec("BEGIN");
  const account = db.prepare(
    "INSERT INTO accounts (id, email, plan, created_at, updated_at) VALUES (?, ?, 'pro', ?, ?)",
  );
  const pool = db.prepare(
    "INSERT INTO bandwidth_pools (account_id, product, purchased_bytes, used_bytes, top_up_count) VALUES (?, ?, 1e15, 0, 1)",
  );
  const subuser = db.prepare(
    `INSERT INTO subusers (id, account_id, name, label, products, concurrent_max, rps_max, password_hash,
       traffic_limit_bytes, created_at, updated_at) VALUES (?, ?, ?, ?, '["residential"]', 100, 100, 'x', 1e15, ?, ?)`,
  );
  const month = db.prepare(
    "INSERT INTO subuser_monthly_usage (subuser_id, month, used_bytes) VALUES (?, '2026-11', 0)",
  );
  for (let a = 0; a < accounts; a++) {
    const id = `usr_${a}`;
    account.run(id, `${id}@example.com`, at, at);
    pool.run(id, "residential");
    pool.run(id, "mobile");
    for (let u = 0; u < cappedPerAccount; u++) {
      subuser.run(`sub_${a}x${u}`, id, `s${a}x${u}`, `l${u}`, at, at);
      month.run(`sub_${a}x${u}`);
    }
  }
  db.exec("COMMIT");
  d1.countWrites();
  // drizzle renders the statements to SQL without a database behind it.
  const renderer = drizzle({} as D1Database, { schema });
  const seqs = new Map<string, number>();
  const run = (accountIndex: number, months: number) => {
    const accountId = `usr_${accountIndex}`;
    const seq = (seqs.get(accountId) ?? 0) + 1;
    seqs.set(accountId, seq);
    const settlement: Settlement = {
      seq,
      pools: [{ product: "residential", bytes: 1_000_000 }],
      months: Array.from({ length: months }, (_, u) => ({
        subuserId: `sub_${accountIndex}x${u}`,
        month: "2026-11",
        usedBytes: seq * 1_000_000,
      })),
    };
    const { steps } = settlementBatch(renderer, { accountId, shard: 0 }, settlement, at + seq);
    const begin = performance.now();
    db.exec("BEGIN");
    for (const step of steps) execute(d1, statementOf(step));
    db.exec("COMMIT");
    return performance.now() - begin;
  };
  const measure = (months: number) => {
    d1.resetCounts();
    const times: number[] = [];
    for (let i = 0; i < samples; i++) times.push(run((i * 7919) % accounts, months));
    return { ms: median(times), rows: d1.rowsWritten().total / samples };
  };
  const byMonths = new Map<number, { ms: number; rows: number }>();
  for (const months of [0, 1, 5, Math.max(5, cappedPerAccount)]) byMonths.set(months, measure(months));
  const interpolate = (months: number, pick: (m: { ms: number; rows: number }) => number) => {
    const points = [...byMonths].sort(([a], [b]) => a - b);
    for (let i = 1; i < points.length; i++) {
      const [m0, v0] = points[i - 1] as [number, { ms: number; rows: number }];
      const [m1, v1] = points[i] as [number, { ms: number; rows: number }];
      if (months <= m1 || i === points.length - 1) {
        return pick(v0) + ((pick(v1) - pick(v0)) * (months - m0)) / Math.max(1, m1 - m0);
      }
    }
    return pick(points[0]?.[1] ?? { ms: 0, rows: 0 });
  };
  db.close();
  return {
    settlementMs: (months) => interpolate(months, (m) => m.ms),
    settlementRows: (months) => interpolate(months, (m) => m.rows),
  };
}

/** Runs one drizzle statement's SQL (an `abortIf` that holds would abort the batch: none does here). */
function execute(d1: NodeSqlStorage, statement: Statement): void {
  const { sql, params } = (statement as unknown as { toSQL(): { sql: string; params: unknown[] } }).toSQL();
  d1.db.prepare(sql).all(...(params as Array<string | number | null>));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

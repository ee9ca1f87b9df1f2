import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";
import { TERMINATED_KEPT_MS } from "../subuser-gate/contract";
import type { SessionFilters, SessionSnapshot, TrafficProduct } from "./contract";

type Row = {
  id: string;
  subuser: string;
  gate: string;
  product: TrafficProduct;
  session_id: string;
  region: string;
  state: string | null;
  city: string | null;
  asn: number | null;
  exit_ip: string | null;
  started_at: number;
  expires_at: number;
  status: "active" | "terminated";
  terminated_at: number | null;
  bytes_used: number;
  requests: number;
  repinned: number;
  version: number;
};

const COLUMNS =
  "id, subuser, gate, product, session_id, region, state, city, asn, exit_ip, started_at, expires_at, status, terminated_at, bytes_used, requests, repinned, version";

/** The session index's storage steps (`migrate`): append, never edit. */
const SESSION_INDEX_STORAGE: StorageStep[] = [
  // 1: the table.
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY, subuser TEXT NOT NULL, gate TEXT NOT NULL, product TEXT NOT NULL,
        session_id TEXT NOT NULL, region TEXT NOT NULL, state TEXT, city TEXT, asn INTEGER, exit_ip TEXT,
        started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, status TEXT NOT NULL, terminated_at INTEGER,
        bytes_used INTEGER NOT NULL, requests INTEGER NOT NULL, repinned INTEGER NOT NULL, version INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS sessions_by_product ON sessions (product, id);
    `),
];

/**
 * The account's sticky sessions across all its sub-users, for listing and for finding a session's gate: copies
 * the gates send (a late, older copy never overwrites a newer one). A session is visible while live, and for 24
 * hours after an early termination; expired ones are gone at once, whatever the purge has done.
 */
export class SessionIndex {
  readonly #sql: SqlStorage;

  constructor(storage: AreaStorage) {
    this.#sql = storage.sql;
    migrate(storage, "session_index", SESSION_INDEX_STORAGE);
  }

  upsert(snapshots: SessionSnapshot[]): void {
    for (const s of snapshots) {
      this.#sql.exec(
        `INSERT INTO sessions (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET exit_ip = excluded.exit_ip, status = excluded.status,
           terminated_at = excluded.terminated_at, bytes_used = excluded.bytes_used, requests = excluded.requests,
           repinned = excluded.repinned, version = excluded.version
         WHERE excluded.version > sessions.version`,
        s.id,
        s.subuserId,
        s.gateName,
        s.product,
        s.sessionId,
        s.region,
        s.state,
        s.city,
        s.asn,
        s.exitIp,
        s.startedAt,
        s.expiresAt,
        s.status,
        s.terminatedAt,
        s.bytesUsed,
        s.requests,
        s.repinned ? 1 : 0,
        s.version,
      );
    }
  }

  list(filters: SessionFilters, at: number): SessionSnapshot[] {
    const where = [
      "product = ?",
      "((status = 'active' AND expires_at > ?) OR (status = 'terminated' AND terminated_at > ?))",
    ];
    const params: Array<string | number> = [filters.product, at, at - TERMINATED_KEPT_MS];
    const add = (clause: string, value: string | number | undefined) => {
      if (value === undefined) return;
      where.push(clause);
      params.push(value);
    };
    add("subuser = ?", filters.subuserId);
    add("session_id = ?", filters.sessionId);
    add("region = ?", filters.region);
    add("asn = ?", filters.asn);
    add("repinned = ?", filters.repinned === undefined ? undefined : filters.repinned ? 1 : 0);
    add("id < ?", filters.before);
    return this.#sql
      .exec<Row>(
        `SELECT ${COLUMNS} FROM sessions WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`,
        ...params,
        filters.limit,
      )
      .toArray()
      .map(toSnapshot);
  }

  find(id: string): SessionSnapshot | null {
    const row = this.#sql.exec<Row>(`SELECT ${COLUMNS} FROM sessions WHERE id = ?`, id).toArray()[0];
    return row ? toSnapshot(row) : null;
  }

  prune(at: number): void {
    this.#sql.exec(
      "DELETE FROM sessions WHERE (status = 'active' AND expires_at <= ?) OR (status = 'terminated' AND terminated_at <= ?)",
      at,
      at - TERMINATED_KEPT_MS,
    );
  }
}

function toSnapshot(row: Row): SessionSnapshot {
  return {
    id: row.id,
    subuserId: row.subuser,
    gateName: row.gate,
    product: row.product,
    sessionId: row.session_id,
    region: row.region,
    state: row.state,
    city: row.city,
    asn: row.asn,
    exitIp: row.exit_ip,
    startedAt: row.started_at,
    expiresAt: row.expires_at,
    status: row.status,
    terminatedAt: row.terminated_at,
    bytesUsed: row.bytes_used,
    requests: row.requests,
    repinned: row.repinned === 1,
    version: row.version,
  };
}

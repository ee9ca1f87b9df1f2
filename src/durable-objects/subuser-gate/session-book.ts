import { newIdAt } from "../../platform/ids";
import { canonicalIp } from "../../platform/ip";
import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";
import type { SessionDelta, SessionSnapshot, SessionUsage, TrafficProduct } from "../traffic-store/contract";
import { type SessionPin, type SessionSpec, TERMINATED_KEPT_MS } from "./contract";

/** The session book's storage steps (`migrate`): append, never edit. */
const SESSION_BOOK_STORAGE: StorageStep[] = [
  // 1: the tables.
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY, key TEXT NOT NULL, product TEXT NOT NULL, session_id TEXT NOT NULL, region TEXT NOT NULL,
        state TEXT, city TEXT, asn INTEGER, exit_ip TEXT, started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'active', terminated_at INTEGER, bytes_used INTEGER NOT NULL DEFAULT 0,
        requests INTEGER NOT NULL DEFAULT 0, repinned INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 1
      );
      CREATE INDEX IF NOT EXISTS sessions_key ON sessions (key, started_at);
      CREATE TABLE IF NOT EXISTS session_requests (
        session TEXT NOT NULL, request_id TEXT NOT NULL, ts INTEGER NOT NULL, method TEXT NOT NULL,
        target_host TEXT NOT NULL, status INTEGER NOT NULL, bytes INTEGER NOT NULL, exit_ip TEXT NOT NULL,
        PRIMARY KEY (session, request_id)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS session_outbox (session TEXT PRIMARY KEY);
      CREATE TABLE IF NOT EXISTS usage_applied (key TEXT PRIMARY KEY, at INTEGER NOT NULL);
    `),
  // 2: sessions' usage (counters, last requests) moved to the account's traffic store, which sums it from the usage
  // parts once each: the gate keeps the pins, and copies nothing.
  (sql) => sql.exec("DROP TABLE session_requests; DROP TABLE session_outbox; DROP TABLE usage_applied;"),
  // 3: no index by key. A gate's sessions are few (the live ones, and the ended ones until purged), so the rare
  // lookup by key (usage that names no session) scans them; every session started wrote a row to the index.
  (sql) => sql.exec("DROP INDEX IF EXISTS sessions_key"),
  // 4: the sessions keyed by id in the table itself (WITHOUT ROWID): a rowid table keeps its text key in an index
  // too, a second row written per session.
  (sql) =>
    sql.exec(`
      CREATE TABLE sessions_by_id (
        id TEXT PRIMARY KEY, key TEXT NOT NULL, product TEXT NOT NULL, session_id TEXT NOT NULL, region TEXT NOT NULL,
        state TEXT, city TEXT, asn INTEGER, exit_ip TEXT, started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        status TEXT NOT NULL DEFAULT 'active', terminated_at INTEGER, bytes_used INTEGER NOT NULL DEFAULT 0,
        requests INTEGER NOT NULL DEFAULT 0, repinned INTEGER NOT NULL DEFAULT 0, version INTEGER NOT NULL DEFAULT 1
      ) WITHOUT ROWID;
      INSERT INTO sessions_by_id SELECT id, key, product, session_id, region, state, city, asn, exit_ip, started_at,
        expires_at, status, terminated_at, bytes_used, requests, repinned, version FROM sessions;
      DROP TABLE sessions;
      ALTER TABLE sessions_by_id RENAME TO sessions;
    `),
];

/** Who a session is, for the usage the gate matched to it (records that did not name their session). */
export type SessionIdentity = Omit<SessionDelta, "usage">;

type Row = {
  id: string;
  key: string;
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

/**
 * The sticky sessions of one sub-user, inside its gate (SQLite storage, synchronous: pinning never awaits): the
 * pins. The whole username is the session key; one live session per key. A session's exit IP is pinned by the
 * gateway's release of its first connection (or, for records that do not name their session, by the first usage the
 * gate matches to it); its usage is summed by the account's traffic store, whose index the gate tells of sessions
 * it starts.
 */
export class SessionBook {
  readonly #sql: SqlStorage;
  readonly #owner: { subuserId: () => string; gateName: () => string };
  /** Live sessions by key, so an authorize reuses one without a query. */
  readonly #live = new Map<string, Row>();
  /** Sessions started since the account's index was last told (memory only: usage names them anyway). */
  readonly #started = new Map<string, Row>();

  constructor(storage: AreaStorage, identity: { subuserId: () => string; gateName: () => string }) {
    const sql = storage.sql;
    this.#sql = sql;
    this.#owner = identity;
    migrate(storage, "session_book", SESSION_BOOK_STORAGE);
    for (const row of sql.exec<Row>("SELECT * FROM sessions WHERE status = 'active'"))
      this.#live.set(row.key, stored(row));
  }

  /**
   * The live session of the key, or a new one started now that expires `minutes` later, pinned to `exitIp` when
   * given (one row written: a gateway node proposes the exit it will use).
   */
  pin(spec: SessionSpec, at: number, exitIp: string | null = null): SessionPin {
    const live = this.#live.get(spec.key);
    if (live && live.expires_at > at) return toPin(live);
    const row: Row = {
      id: newIdAt("session", at),
      key: spec.key,
      product: spec.product,
      session_id: spec.sessionId,
      region: spec.region,
      state: spec.state,
      city: spec.city,
      asn: spec.asn,
      exit_ip: exitIp === null ? null : canonicalIp(exitIp),
      started_at: at,
      expires_at: at + spec.minutes * 60_000,
      status: "active",
      terminated_at: null,
      bytes_used: 0,
      requests: 0,
      repinned: 0,
      version: 1,
    };
    this.#sql.exec(
      `INSERT INTO sessions (id, key, product, session_id, region, state, city, asn, exit_ip, started_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.key,
      row.product,
      row.session_id,
      row.region,
      row.state,
      row.city,
      row.asn,
      row.exit_ip,
      row.started_at,
      row.expires_at,
    );
    this.#live.set(spec.key, row);
    this.#started.set(row.id, row);
    return toPin(row);
  }

  /**
   * Matches usage of records that named no session to the sessions of their usernames (the latest started, with a
   * second of clock skew, at or before the usage): pins the exit IP of a session that has none, moves it on a repin.
   * Returns who each usage's session is (null: none matches).
   */
  resolve(usages: SessionUsage[]): Array<SessionIdentity | null> {
    const sessionAt = this.#sessionFinder(usages.map((usage) => usage.username));
    return usages.map((usage) => {
      const row = sessionAt(usage.username, usage.lastTs);
      if (!row) return null;
      this.#pinExit(row, usage.repinnedExitIp ?? usage.firstExitIp, usage.repinnedExitIp !== null);
      return this.#identity(row);
    });
  }

  /**
   * The gateway released a session's connection: the exit it used pins the session (or moves it on a repin).
   * Returns the session's pin after it (null: no such session).
   */
  pinExit(id: string, exitIp: string, repinned: boolean): SessionPin | null {
    const row = this.#row(id);
    if (!row) return null;
    if (row.status === "active") this.#pinExit(row, exitIp, repinned);
    return toPin(row);
  }

  /** Pins the exit in canonical text; an exit that is no address pins nothing. */
  #pinExit(row: Row, exitIp: string, repinned: boolean): void {
    const exit = canonicalIp(exitIp);
    if (exit === null || (row.exit_ip !== null && !(repinned && row.exit_ip !== exit))) return;
    row.exit_ip = exit;
    row.repinned = row.repinned || repinned ? 1 : 0;
    row.version += 1;
    this.#sql.exec(
      "UPDATE sessions SET exit_ip = ?, repinned = ?, version = ? WHERE id = ?",
      row.exit_ip,
      row.repinned,
      row.version,
      row.id,
    );
    if (this.#live.get(row.key)?.id === row.id) this.#live.set(row.key, row);
  }

  /** Ends a session early: the next authorize with its username starts a new one. */
  terminate(id: string, at: number): SessionSnapshot | null {
    const row = this.#row(id);
    if (!row) return null;
    if (row.status !== "active" || row.expires_at <= at) return this.#snapshot(row);
    this.#sql.exec(
      "UPDATE sessions SET status = 'terminated', terminated_at = ?, version = version + 1 WHERE id = ?",
      at,
      id,
    );
    this.#live.delete(row.key);
    const ended = this.#row(id);
    return ended ? this.#snapshot(ended) : null;
  }

  /**
   * The sessions started since the last call, for the account's index: it lists a session before its first usage
   * arrives. Kept in memory only: a session lost here by a restart is listed once its usage names it.
   */
  takeStarted(): SessionSnapshot[] {
    const started = [...this.#started.values()].map((row) => this.#snapshot(row));
    this.#started.clear();
    return started;
  }

  /** Forgets expired sessions and terminated ones after 24 hours. Returns when to purge next. */
  purge(at: number): number | null {
    this.#sql.exec(
      "DELETE FROM sessions WHERE (status = 'active' AND expires_at <= ?) OR (status = 'terminated' AND terminated_at <= ?)",
      at,
      at - TERMINATED_KEPT_MS,
    );
    for (const [key, row] of this.#live) if (row.expires_at <= at) this.#live.delete(key);
    const next = this.#sql
      .exec<{ next: number | null }>(
        `SELECT min(CASE WHEN status = 'active' THEN expires_at ELSE terminated_at + ? END) AS next FROM sessions`,
        TERMINATED_KEPT_MS,
      )
      .one().next;
    return next;
  }

  /**
   * Finds the session a username's usage at a time belongs to: the latest started (allowing a second of clock
   * skew) at or before it. The usernames' sessions are read in one query.
   */
  #sessionFinder(usernames: string[]): (username: string, ts: number) => Row | undefined {
    const keys = [...new Set(usernames.map((username) => username.toLowerCase()))];
    const byKey = new Map<string, Row[]>();
    const rows = this.#sql.exec<Row>(
      "SELECT * FROM sessions WHERE key IN (SELECT value FROM json_each(?)) ORDER BY started_at DESC",
      JSON.stringify(keys),
    );
    for (const row of rows) {
      const list = byKey.get(row.key) ?? [];
      list.push(stored(row));
      byKey.set(row.key, list);
    }
    return (username, ts) => byKey.get(username.toLowerCase())?.find((row) => row.started_at <= ts + 1000);
  }

  #row(id: string): Row | undefined {
    const row = this.#sql.exec<Row>("SELECT * FROM sessions WHERE id = ?", id).toArray()[0];
    return row && stored(row);
  }

  #identity(row: Row): SessionIdentity {
    return {
      id: row.id,
      subuserId: this.#owner.subuserId(),
      gateName: this.#owner.gateName(),
      product: row.product,
      sessionId: row.session_id,
      region: row.region,
      state: row.state,
      city: row.city,
      asn: row.asn,
      startedAt: row.started_at,
      expiresAt: row.expires_at,
    };
  }

  #snapshot(row: Row): SessionSnapshot {
    return {
      ...this.#identity(row),
      exitIp: row.exit_ip,
      status: row.status,
      terminatedAt: row.terminated_at,
      bytesUsed: 0,
      requests: 0,
      repinned: row.repinned === 1,
      version: row.version,
    };
  }
}

/**
 * A row as read from storage, its exit in canonical text: an exit pinned before exits were checked may be no
 * address, and such a session is as if unpinned (the next pin sets it).
 */
function stored(row: Row): Row {
  if (row.exit_ip !== null) row.exit_ip = canonicalIp(row.exit_ip);
  return row;
}

function toPin(row: Row): SessionPin {
  return { id: row.id, exitIp: row.exit_ip, startedAt: row.started_at, expiresAt: row.expires_at };
}

import { DAY } from "../../platform/clock";
import { newId } from "../../platform/ids";
import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";
import type { SessionRequest, SessionSnapshot, SessionUsage, TrafficProduct } from "../traffic-store/contract";
import {
  addSessionUsage,
  copySessionUsage,
  LAST_REQUESTS,
  type SessionPin,
  type SessionSpec,
  TERMINATED_KEPT_MS,
} from "./contract";

/** Usage parts applied, kept a day (as the account's store keeps them: copies arrive within minutes). */
const APPLIED_KEPT_MS = DAY;

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
];

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
 * The sticky sessions of one sub-user, inside its gate (SQLite storage, synchronous: pinning never awaits).
 * The whole username is the session key; one live session per key. Sessions that changed wait in an outbox
 * until the gate copies them to the account's session index.
 */
export class SessionBook {
  readonly #sql: SqlStorage;
  readonly #identity: { subuserId: () => string; gateName: () => string };
  /** Live sessions by key, so an authorize reuses one without a query. */
  readonly #live = new Map<string, Row>();

  constructor(storage: AreaStorage, identity: { subuserId: () => string; gateName: () => string }) {
    const sql = storage.sql;
    this.#sql = sql;
    this.#identity = identity;
    migrate(storage, "session_book", SESSION_BOOK_STORAGE);
    for (const row of sql.exec<Row>("SELECT * FROM sessions WHERE status = 'active'")) this.#live.set(row.key, row);
  }

  /** The live session of the key, or a new one started now that expires `minutes` later. */
  pin(spec: SessionSpec, at: number): SessionPin {
    const live = this.#live.get(spec.key);
    if (live && live.expires_at > at) return toPin(live);
    const row: Row = {
      id: newId("session", at),
      key: spec.key,
      product: spec.product,
      session_id: spec.sessionId,
      region: spec.region,
      state: spec.state,
      city: spec.city,
      asn: spec.asn,
      exit_ip: null,
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
      `INSERT INTO sessions (id, key, product, session_id, region, state, city, asn, started_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      row.id,
      row.key,
      row.product,
      row.session_id,
      row.region,
      row.state,
      row.city,
      row.asn,
      row.started_at,
      row.expires_at,
    );
    this.#touch([row.id]);
    this.#live.set(spec.key, row);
    return toPin(row);
  }

  /**
   * Adds usage parts' session usage, each part once (a key given twice counts once): pins the exit IP of a session that has none, moves it
   * on a repin, counts bytes and requests, keeps the last 10 requests. The messages' usage is summed per session
   * first, so each session changes once however many messages there are. Returns the current state of every
   * session the messages touched (applied now or before).
   */
  apply(given: Array<{ key: string; usages: SessionUsage[] }>, at: number): SessionSnapshot[] {
    const distinct = new Set<string>();
    const parts = given.filter((part) => !distinct.has(part.key) && distinct.add(part.key));
    const applied = new Set(
      this.#sql
        .exec<{ key: string }>(
          "SELECT key FROM usage_applied WHERE key IN (SELECT value FROM json_each(?))",
          JSON.stringify(parts.map((part) => part.key)),
        )
        .toArray()
        .map((row) => row.key),
    );
    const fresh = parts.filter((part) => !applied.has(part.key));
    if (fresh.length > 0) {
      this.#sql.exec(
        "INSERT OR IGNORE INTO usage_applied (key, at) SELECT value, ? FROM json_each(?)",
        at,
        JSON.stringify(fresh.map((part) => part.key)),
      );
    }
    const sessionAt = this.#sessionFinder(parts.flatMap((part) => part.usages.map((usage) => usage.username)));
    const touched = new Set<string>();
    const totals = new Map<string, SessionUsage>();
    for (const part of parts) {
      const isFresh = !applied.has(part.key);
      for (const usage of part.usages) {
        const id = sessionAt(usage.username, usage.lastTs)?.id;
        if (!id) continue;
        touched.add(id);
        if (!isFresh) continue;
        const total = totals.get(id);
        if (total) addSessionUsage(total, usage);
        else totals.set(id, copySessionUsage(usage));
      }
    }
    this.#addUsage(totals);
    const rows = this.#rows([...touched]);
    for (const row of rows) {
      if (row.status === "active" && this.#live.get(row.key)?.id === row.id) this.#live.set(row.key, row);
    }
    return rows.map((row) => this.#snapshot(row));
  }

  /**
   * Each session's summed usage, in a few set-based statements: its counters and pin, its newest 10 requests,
   * and its place in the outbox.
   */
  #addUsage(totals: Map<string, SessionUsage>): void {
    if (totals.size === 0) return;
    const usages = [...totals];
    this.#sql.exec(
      `UPDATE sessions SET exit_ip = coalesce(u.repinned_ip, sessions.exit_ip, u.first_ip),
         repinned = sessions.repinned OR u.repinned_ip IS NOT NULL, bytes_used = bytes_used + u.bytes,
         requests = sessions.requests + u.requests, version = version + 1
       FROM (SELECT value->>0 AS id, value->>1 AS repinned_ip, value->>2 AS first_ip, value->>3 AS bytes,
               value->>4 AS requests FROM json_each(?)) AS u
       WHERE sessions.id = u.id`,
      JSON.stringify(
        usages.map(([id, usage]) => [id, usage.repinnedExitIp, usage.firstExitIp, usage.bytes, usage.requests]),
      ),
    );
    this.#sql.exec(
      `INSERT OR IGNORE INTO session_requests (session, request_id, ts, method, target_host, status, bytes, exit_ip)
       SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7 FROM json_each(?)`,
      JSON.stringify(
        usages.flatMap(([id, usage]) =>
          usage.lastRequests.map((r) => [id, r.requestId, r.ts, r.method, r.targetHost, r.status, r.bytes, r.exitIp]),
        ),
      ),
    );
    const ids = JSON.stringify(usages.map(([id]) => id));
    this.#sql.exec(
      `DELETE FROM session_requests WHERE (session, request_id) IN (
         SELECT session, request_id FROM (
           SELECT session, request_id,
             row_number() OVER (PARTITION BY session ORDER BY ts DESC, request_id DESC) AS newest
           FROM session_requests WHERE session IN (SELECT value FROM json_each(?1)))
         WHERE newest > ${LAST_REQUESTS})`,
      ids,
    );
    this.#touch(usages.map(([id]) => id));
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
    this.#touch([id]);
    return this.snapshots([id])[0] ?? null;
  }

  find(id: string): { session: SessionSnapshot; lastRequests: SessionRequest[] } | null {
    const row = this.#row(id);
    if (!row) return null;
    const lastRequests = this.#sql
      .exec<{
        request_id: string;
        ts: number;
        method: string;
        target_host: string;
        status: number;
        bytes: number;
        exit_ip: string;
      }>(
        "SELECT * FROM session_requests WHERE session = ? ORDER BY ts DESC, request_id DESC LIMIT ?",
        id,
        LAST_REQUESTS,
      )
      .toArray()
      .map((r) => ({
        requestId: r.request_id,
        ts: r.ts,
        method: r.method,
        targetHost: r.target_host,
        status: r.status,
        bytes: r.bytes,
        exitIp: r.exit_ip,
      }));
    return { session: this.#snapshot(row), lastRequests };
  }

  snapshots(ids: string[]): SessionSnapshot[] {
    return this.#rows(ids).map((row) => this.#snapshot(row));
  }

  /** Sessions waiting to be copied to the account's index. */
  outbox(): SessionSnapshot[] {
    const ids = this.#sql.exec<{ session: string }>("SELECT session FROM session_outbox").toArray();
    return this.snapshots(ids.map((row) => row.session));
  }

  /** Clears the outbox of what was copied (a session changed since stays, at its newer version). */
  copied(snapshots: SessionSnapshot[]): void {
    if (snapshots.length === 0) return;
    this.#sql.exec(
      `DELETE FROM session_outbox WHERE session IN (SELECT c.value->>0 FROM json_each(?) AS c
         WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id = c.value->>0 AND version > c.value->>1))`,
      JSON.stringify(snapshots.map((snapshot) => [snapshot.id, snapshot.version])),
    );
  }

  /** Forgets expired sessions, terminated ones after 24 hours, and old usage keys. Returns when to purge next. */
  purge(at: number): number | null {
    this.#sql.exec(
      `DELETE FROM session_requests WHERE session IN (SELECT id FROM sessions
         WHERE (status = 'active' AND expires_at <= ?) OR (status = 'terminated' AND terminated_at <= ?))`,
      at,
      at - TERMINATED_KEPT_MS,
    );
    this.#sql.exec(
      "DELETE FROM sessions WHERE (status = 'active' AND expires_at <= ?) OR (status = 'terminated' AND terminated_at <= ?)",
      at,
      at - TERMINATED_KEPT_MS,
    );
    this.#sql.exec("DELETE FROM usage_applied WHERE at <= ?", at - APPLIED_KEPT_MS);
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
      list.push(row);
      byKey.set(row.key, list);
    }
    return (username, ts) => byKey.get(username.toLowerCase())?.find((row) => row.started_at <= ts + 1000);
  }

  #row(id: string): Row | undefined {
    return this.#sql.exec<Row>("SELECT * FROM sessions WHERE id = ?", id).toArray()[0];
  }

  #rows(ids: string[]): Row[] {
    if (ids.length === 0) return [];
    return this.#sql
      .exec<Row>("SELECT * FROM sessions WHERE id IN (SELECT value FROM json_each(?))", JSON.stringify(ids))
      .toArray();
  }

  /** Queues sessions to be copied to the account's index. */
  #touch(ids: string[]): void {
    this.#sql.exec(
      "INSERT OR IGNORE INTO session_outbox (session) SELECT value FROM json_each(?)",
      JSON.stringify(ids),
    );
  }

  #snapshot(row: Row): SessionSnapshot {
    return {
      id: row.id,
      subuserId: this.#identity.subuserId(),
      gateName: this.#identity.gateName(),
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
}

function toPin(row: Row): SessionPin {
  return { id: row.id, exitIp: row.exit_ip, startedAt: row.started_at, expiresAt: row.expires_at };
}

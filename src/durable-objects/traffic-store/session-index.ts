import { MINUTE } from "../../platform/clock";
import { addSessionUsage, copySessionUsage, TERMINATED_KEPT_MS } from "../subuser-gate/contract";
import type { ArrivalRows } from "./arrival-rows";
import type { SessionDelta, SessionFilters, SessionRequest, SessionSnapshot, SessionUsage } from "./contract";

/** The longest a session lives (mobile `sesstime` 60 minutes), and a margin for usage reported late. */
const LIVE_WINDOW_MS = 70 * MINUTE;

export const SESSION_TABLES = `
  CREATE TABLE IF NOT EXISTS session_records (product TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (product, id)) WITHOUT ROWID;`;

/** A session as the index holds it: who it is, its usage summed, and whether it was ended early. */
export interface SessionRecord {
  identity: Omit<SessionDelta, "usage">;
  usage: SessionUsage | null;
  status: "active" | "terminated";
  terminatedAt: number | null;
}

/**
 * The account's sticky sessions across all its sub-users, for listing and reading: each session's record is its
 * identity (from the gateway's records, which name the session its decision gave them) and its usage summed from
 * the parts' session usage, each part once. Live sessions are read back from the arrival rows of the last 70 minutes
 * (no session lives longer) when first needed; a session terminated early is written once, usage and all, to
 * `session_records` (kept 24 hours; so are sessions a store of the earlier layout carried over), and usage that
 * arrives for it later is added there. A session shows once its
 * first usage is applied; expired ones are gone at once, whatever the purge has done.
 */
export class SessionIndex {
  readonly #sql: SqlStorage;
  readonly #arrivals: ArrivalRows;
  readonly #ended = new Map<string, SessionRecord>();
  /** Live sessions by id (null until first needed). */
  #live: Map<string, SessionRecord> | null = null;
  /**
   * Sessions their gates started and no usage has named yet (memory only: the usage that names a session brings
   * who it is, so one lost here by a restart is listed again once it carries traffic).
   */
  readonly #announced = new Map<string, SessionRecord>();

  constructor(sql: SqlStorage, arrivals: ArrivalRows) {
    this.#sql = sql;
    this.#arrivals = arrivals;
    for (const row of sql.exec<{ record: string }>("SELECT record FROM session_records")) {
      const record = JSON.parse(row.record) as SessionRecord;
      this.#ended.set(record.identity.id, record);
    }
  }

  /** An ingest's session usage (each part once: the caller's exactly-once step). */
  apply(deltas: SessionDelta[]): void {
    const endedChanged = new Set<SessionRecord>();
    for (const delta of deltas) {
      const ended = this.#ended.get(delta.id);
      if (ended) {
        addUsage(ended, delta.usage);
        endedChanged.add(ended);
      } else if (this.#live) addDelta(this.#live, delta);
    }
    for (const record of endedChanged) this.#save(record);
  }

  /** Sessions their gates started: listed (with no usage) until their usage arrives. */
  announce(snapshot: SessionSnapshot): void {
    if (snapshot.status !== "active" || this.#ended.has(snapshot.id) || this.#live?.has(snapshot.id)) return;
    this.#announced.set(snapshot.id, {
      identity: identityOf(snapshot),
      usage: null,
      status: "active",
      terminatedAt: null,
    });
  }

  /**
   * A session ended early (the gate's snapshot of it): its record, with its usage so far, is written to
   * `session_records`; a later copy changes nothing.
   */
  terminate(snapshot: SessionSnapshot): void {
    if (snapshot.status !== "terminated") return;
    const kept = this.#ended.get(snapshot.id);
    if (kept?.status === "terminated") return;
    const live = this.#load().get(snapshot.id);
    const record: SessionRecord = kept ?? {
      identity: identityOf(snapshot),
      usage: live?.usage ? copySessionUsage(live.usage) : null,
      status: "terminated",
      terminatedAt: snapshot.terminatedAt,
    };
    record.status = "terminated";
    record.terminatedAt = snapshot.terminatedAt;
    this.#live?.delete(snapshot.id);
    this.#announced.delete(snapshot.id);
    this.#ended.set(snapshot.id, record);
    this.#save(record);
  }

  list(filters: SessionFilters, at: number): SessionSnapshot[] {
    return this.#records()
      .filter((record) => visible(record, at) && matches(record, filters))
      .sort((a, b) => (a.identity.id < b.identity.id ? 1 : a.identity.id > b.identity.id ? -1 : 0))
      .slice(0, filters.limit)
      .map(snapshotOf);
  }

  /** A session with its last 10 requests, while it is visible. */
  find(id: string, at: number): { session: SessionSnapshot; lastRequests: SessionRequest[] } | null {
    const record = this.#ended.get(id) ?? this.#load().get(id) ?? this.#announced.get(id);
    if (!record || !visible(record, at)) return null;
    return { session: snapshotOf(record), lastRequests: record.usage?.lastRequests ?? [] };
  }

  /** Every session the index knows: live (usage), ended or carried (records), started (announced). */
  #records(): SessionRecord[] {
    const live = this.#load();
    const announced = [...this.#announced.values()].filter(
      (record) => !live.has(record.identity.id) && !this.#ended.has(record.identity.id),
    );
    return [...live.values(), ...this.#ended.values(), ...announced];
  }

  /** Forgets ended sessions 24 hours after their end, and expired ones. */
  prune(at: number): void {
    for (const [id, record] of this.#announced)
      if (!visible(record, at) || this.#live?.has(id)) this.#announced.delete(id);
    for (const [id, record] of this.#ended) {
      if (visible(record, at)) continue;
      this.#sql.exec("DELETE FROM session_records WHERE product = ? AND id = ?", record.identity.product, id);
      this.#ended.delete(id);
    }
    for (const [id, record] of this.#live ?? []) if (record.identity.expiresAt <= at) this.#live?.delete(id);
  }

  /** The live sessions: the session usage of the arrival rows of the last 70 minutes. */
  #load(): Map<string, SessionRecord> {
    if (this.#live) return this.#live;
    const live = new Map<string, SessionRecord>();
    const newest = Math.max(0, ...this.#arrivals.heads().map((head) => head.minute));
    for (const head of this.#arrivals.heads()) {
      if (head.minute < newest - LIVE_WINDOW_MS) continue;
      for (const delta of this.#arrivals.column(head.slot, "sessions")) {
        if (!this.#ended.has(delta.id)) addDelta(live, delta);
      }
    }
    this.#live = live;
    return live;
  }

  /** Writes a record as it stands (the layout step carries sessions over with it). */
  static save(sql: SqlStorage, record: SessionRecord): void {
    sql.exec(
      `INSERT INTO session_records (product, id, record) VALUES (?, ?, ?)
       ON CONFLICT (product, id) DO UPDATE SET record = excluded.record`,
      record.identity.product,
      record.identity.id,
      JSON.stringify(record),
    );
  }

  #save(record: SessionRecord): void {
    SessionIndex.save(this.#sql, record);
  }
}

function identityOf(snapshot: SessionSnapshot): SessionRecord["identity"] {
  return {
    id: snapshot.id,
    subuserId: snapshot.subuserId,
    gateName: snapshot.gateName,
    product: snapshot.product,
    sessionId: snapshot.sessionId,
    region: snapshot.region,
    state: snapshot.state,
    city: snapshot.city,
    asn: snapshot.asn,
    startedAt: snapshot.startedAt,
    expiresAt: snapshot.expiresAt,
  };
}

function addDelta(live: Map<string, SessionRecord>, delta: SessionDelta): void {
  const record = live.get(delta.id);
  if (record) addUsage(record, delta.usage);
  else {
    const { usage, ...identity } = delta;
    live.set(delta.id, { identity, usage: copySessionUsage(usage), status: "active", terminatedAt: null });
  }
}

function addUsage(record: SessionRecord, usage: SessionUsage): void {
  if (record.usage) addSessionUsage(record.usage, usage);
  else record.usage = copySessionUsage(usage);
}

function visible(record: SessionRecord, at: number): boolean {
  return record.status === "active"
    ? record.identity.expiresAt > at
    : (record.terminatedAt ?? 0) > at - TERMINATED_KEPT_MS;
}

function matches(record: SessionRecord, filters: SessionFilters): boolean {
  const { identity } = record;
  if (identity.product !== filters.product) return false;
  if (filters.subuserId !== undefined && identity.subuserId !== filters.subuserId) return false;
  if (filters.sessionId !== undefined && identity.sessionId !== filters.sessionId) return false;
  if (filters.region !== undefined && identity.region !== filters.region) return false;
  if (filters.asn !== undefined && identity.asn !== filters.asn) return false;
  if (filters.repinned !== undefined && (record.usage?.repinnedExitIp != null) !== filters.repinned) return false;
  return filters.before === undefined || identity.id < filters.before;
}

function snapshotOf(record: SessionRecord): SessionSnapshot {
  const { identity, usage } = record;
  return {
    ...identity,
    exitIp: usage ? (usage.repinnedExitIp ?? usage.firstExitIp) : null,
    status: record.status,
    terminatedAt: record.terminatedAt,
    bytesUsed: usage?.bytes ?? 0,
    requests: usage?.requests ?? 0,
    repinned: usage?.repinnedExitIp != null,
    version: usage?.requests ?? 0,
  };
}

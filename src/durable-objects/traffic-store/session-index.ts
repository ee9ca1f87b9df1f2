import { MINUTE } from "../../platform/clock";
import { sessionIdAt } from "../../platform/sticky-sessions";
import { addSessionUsage, copySessionUsage, TERMINATED_KEPT_MS } from "../subuser-gate/contract";
import type { ArrivalRows } from "./arrival-rows";
import {
  type SessionDelta,
  type SessionFilters,
  type SessionRequest,
  type SessionSnapshot,
  type SessionUsage,
  USAGE_CLOCK_SKEW_MS,
} from "./contract";

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
 * identity (from the gateway's records, which name the session its decision gave them, or from the store itself for
 * sessions a node decided: `assign`) and its usage summed from the parts' session usage, each part once. Live
 * sessions are read back from the arrival rows of the last 70 minutes (no session lives longer) when first needed; a
 * session terminated early is written once, usage and all, to `session_records` (kept 24 hours; so are sessions a
 * store of the earlier layout carried over), and usage that arrives for it later is added there. No other row is
 * written per session: a node-decided session's identity travels with its usage in the arrival rows. A session
 * shows once its first usage is applied; expired ones are gone at once, whatever the purge has done.
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
  /**
   * The ids of node-decided sessions (live, ended or announced) per session key and generation (`keyName`): where
   * `assign` looks. Ids whose record is gone are dropped when met, and by `prune`.
   */
  readonly #byKey = new Map<string, Set<string>>();

  constructor(sql: SqlStorage, arrivals: ArrivalRows) {
    this.#sql = sql;
    this.#arrivals = arrivals;
    for (const row of sql.exec<{ record: string }>("SELECT record FROM session_records")) {
      const record = JSON.parse(row.record) as SessionRecord;
      this.#ended.set(record.identity.id, record);
      this.#index(record.identity);
    }
  }

  /**
   * Names the sessions of an ingest's keyed deltas (usage of sessions a node decided: `key`, `generation` and a
   * provisional identity) and adds their usage, each part once (the caller's exactly-once step), before the caller
   * writes them to the arrival row: the deltas come back with the identity assigned, which is what the row keeps
   * (so a restart rebuilds the same sessions). In time order, each delta goes to
   * 1. the session of its key and generation, live or terminated, whose [startedAt, expiresAt) holds its first
   *    record (the latest started, should two);
   * 2. else the next such session starting less than `USAGE_CLOCK_SKEW_MS` after its first record: that session now
   *    starts there (earlier; same id), and expires a sesstime later;
   * 3. else a new session starting at its first record, named `sessionIdAt(key, generation, start)`.
   * A delta whose exit differs from its session's so far marks the session repinned. Deltas without a key (sessions
   * the gate named) come back as they are, for `apply`.
   */
  assign(deltas: SessionDelta[]): SessionDelta[] {
    if (!deltas.some(isKeyed)) return deltas;
    const live = this.#load();
    const assigned = [...deltas];
    const order = deltas
      .map((delta, index) => ({ delta, index }))
      .filter(({ delta }) => isKeyed(delta))
      .sort((a, b) => a.delta.usage.firstTs - b.delta.usage.firstTs || a.index - b.index);
    const endedChanged = new Set<SessionRecord>();
    for (const { delta, index } of order) {
      const record = this.#sessionFor(delta, live);
      const usage = withExitChange(delta.usage, record.usage);
      const placed: SessionDelta = {
        ...delta,
        id: record.identity.id,
        startedAt: record.identity.startedAt,
        expiresAt: record.identity.expiresAt,
        usage,
      };
      assigned[index] = placed;
      if (this.#ended.get(record.identity.id) === record) {
        addUsage(record, usage);
        endedChanged.add(record);
      } else addDelta(live, placed);
    }
    for (const record of endedChanged) this.#save(record);
    return assigned;
  }

  /**
   * The session a keyed delta goes to (`assign`'s three steps): an existing record (its start lowered in step 2),
   * or a new live one with no usage yet.
   */
  #sessionFor(delta: SessionDelta, live: Map<string, SessionRecord>): SessionRecord {
    const key = delta.key as string;
    const generation = delta.generation ?? 0;
    const at = delta.usage.firstTs;
    const sesstime = delta.expiresAt - delta.startedAt;
    const records = this.#keyed(keyName(key, generation));
    let holding: SessionRecord | null = null;
    let next: SessionRecord | null = null;
    for (const record of records) {
      const { startedAt, expiresAt } = record.identity;
      if (startedAt <= at && at < expiresAt) {
        if (!holding || startedAt > holding.identity.startedAt) holding = record;
      } else if (startedAt > at && startedAt - at < USAGE_CLOCK_SKEW_MS) {
        if (!next || startedAt < next.identity.startedAt) next = record;
      }
    }
    if (holding) return holding;
    if (next) {
      const lasts = next.identity.expiresAt - next.identity.startedAt;
      next.identity.startedAt = at;
      next.identity.expiresAt = at + lasts;
      if (this.#ended.get(next.identity.id) === next) this.#save(next);
      return next;
    }
    let id = sessionIdAt(key, generation, at);
    // Another session of the key took this id (one whose start moved earlier): the next free one.
    for (let n = 1; this.#recordOf(id); n++) id = sessionIdAt(key, generation, at + n);
    const { usage: _usage, ...identity } = delta;
    const record: SessionRecord = {
      identity: { ...identity, id, startedAt: at, expiresAt: at + sesstime },
      usage: null,
      status: "active",
      terminatedAt: null,
    };
    live.set(id, record);
    this.#index(record.identity);
    return record;
  }

  /** The records of a key and generation (`keyName`), forgetting ids whose record is gone. */
  #keyed(name: string): SessionRecord[] {
    const ids = this.#byKey.get(name);
    if (!ids) return [];
    const records: SessionRecord[] = [];
    for (const id of ids) {
      const record = this.#recordOf(id);
      if (record) records.push(record);
      else ids.delete(id);
    }
    if (ids.size === 0) this.#byKey.delete(name);
    return records;
  }

  #recordOf(id: string): SessionRecord | undefined {
    return this.#ended.get(id) ?? this.#live?.get(id) ?? this.#announced.get(id);
  }

  /** A node-decided session's id under its key and generation. */
  #index(identity: SessionRecord["identity"]): void {
    if (identity.key === undefined) return;
    const name = keyName(identity.key, identity.generation ?? 0);
    const ids = this.#byKey.get(name) ?? new Set<string>();
    ids.add(identity.id);
    this.#byKey.set(name, ids);
  }

  /**
   * An ingest's usage of sessions the gate named (each part once: the caller's exactly-once step); keyed deltas are
   * left out (`assign` applied them).
   */
  apply(deltas: SessionDelta[]): void {
    const endedChanged = new Set<SessionRecord>();
    for (const delta of deltas) {
      if (isKeyed(delta)) continue;
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
    const identity = identityOf(snapshot);
    this.#announced.set(snapshot.id, { identity, usage: null, status: "active", terminatedAt: null });
    this.#index(identity);
  }

  /**
   * A session ended early (the gate's snapshot of it, or the store's own with the status changed: a node-decided
   * session's carries its key and generation, under which later usage of its time finds it): its record, with its
   * usage so far, is written to `session_records`; a later copy changes nothing.
   */
  terminate(snapshot: SessionSnapshot): void {
    if (snapshot.status !== "terminated") return;
    const kept = this.#ended.get(snapshot.id);
    if (kept?.status === "terminated") return;
    const live = this.#load().get(snapshot.id);
    const record: SessionRecord = kept ?? {
      // A node-decided session's identity is the store's own (its start may have moved since the snapshot).
      identity: snapshot.key !== undefined && live ? live.identity : identityOf(snapshot),
      usage: live?.usage ? copySessionUsage(live.usage) : null,
      status: "terminated",
      terminatedAt: snapshot.terminatedAt,
    };
    record.status = "terminated";
    record.terminatedAt = snapshot.terminatedAt;
    this.#live?.delete(snapshot.id);
    this.#announced.delete(snapshot.id);
    this.#ended.set(snapshot.id, record);
    this.#index(record.identity);
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
    for (const name of [...this.#byKey.keys()]) this.#keyed(name);
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
    for (const record of live.values()) this.#index(record.identity);
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
    ...(snapshot.key === undefined ? {} : { key: snapshot.key, generation: snapshot.generation ?? 0 }),
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

/**
 * A delta's usage added to its live session's record (made from the delta if new). The earliest start among a
 * session's deltas is its start (a late earlier record moved it: `assign`), so a restart rebuilds the same record.
 */
function addDelta(live: Map<string, SessionRecord>, delta: SessionDelta): void {
  const record = live.get(delta.id);
  if (record) {
    addUsage(record, delta.usage);
    if (delta.startedAt < record.identity.startedAt) {
      record.identity.startedAt = delta.startedAt;
      record.identity.expiresAt = delta.expiresAt;
    }
  } else {
    const { usage, ...identity } = delta;
    live.set(delta.id, { identity, usage: copySessionUsage(usage), status: "active", terminatedAt: null });
  }
}

/** The session key and generation of a node-decided session, as `#byKey` names them. */
function keyName(key: string, generation: number): string {
  return `${generation}\n${key}`;
}

function isKeyed(delta: SessionDelta): boolean {
  return delta.key !== undefined;
}

/**
 * A delta's usage, marked repinned when its exit differs from its session's so far (a node whose exit pool lost the
 * session's exit, or one that never served the key before): the exit after it is the delta's latest if the delta is
 * the session's latest usage, else the session's. Usage that says so itself is kept as it is.
 */
function withExitChange(usage: SessionUsage, sofar: SessionUsage | null): SessionUsage {
  if (!sofar || usage.repinnedExitIp !== null) return usage;
  const current = sofar.repinnedExitIp ?? sofar.firstExitIp;
  const latest = usage.lastRequests[0]?.exitIp ?? usage.firstExitIp;
  const earlier = usage.lastTs < sofar.firstTs;
  const differs = earlier ? latest !== sofar.firstExitIp : usage.firstExitIp !== current || latest !== current;
  if (!differs) return usage;
  return { ...usage, repinnedExitIp: usage.lastTs >= sofar.lastTs ? latest : current };
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
  if (filters.subuserIds !== undefined && !filters.subuserIds.includes(identity.subuserId)) return false;
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

import { HOUR } from "../../platform/clock";
import { uniformHash } from "../../platform/sampling";
import type { ArrivalRows } from "./arrival-rows";
import { packJson, unpackJson } from "./blob-codec";
import {
  NEW_SOURCE_ALERT_BLOCKS,
  NEW_SOURCE_ALERT_WINDOW_MS,
  SOURCE,
  SOURCES_KEPT_MS,
  SOURCES_PER_SUBUSER,
  type SourceAlert,
  type SourceAlertReceipt,
  type SourceEntry,
  type SourceRow,
} from "./contract";

/** Sub-users' blocks are snapshotted in this many rows (by hash of the sub-user): a snapshot rewrites the changed. */
const SHARDS = 16;
/** Sources are snapshotted this often; between snapshots they are read back from the arrival rows (25 hours). */
export const SOURCES_SNAPSHOT_MS = 6 * HOUR;

export const SOURCE_TABLES = `
  CREATE TABLE IF NOT EXISTS source_shards (shard INTEGER PRIMARY KEY, at INTEGER NOT NULL, minute INTEGER NOT NULL,
    tag INTEGER NOT NULL, body BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS source_alert_state (id INTEGER PRIMARY KEY CHECK (id = 1), body TEXT NOT NULL);`;

/** A sub-user's alert state: its window, the new blocks not announced yet, and the alert waiting for the caller. */
interface AlertState {
  lastAt: number | null;
  unreported: number;
  unreportedBlocks: string[];
  outbox: { at: number; newBlocks: number; blocks: string[] } | null;
}

/**
 * The client blocks (IPv4 /24, IPv6 /64) each sub-user's traffic came from, kept 30 days after they were last seen
 * and at most 1,000 per sub-user (the least recently seen go first), and the `subuser.new_source` alerts they
 * raise: a block a sub-user never had (or had forgotten) counts as new; a sub-user's new blocks form one alert at
 * most every 15 minutes, counting every new block since the previous one. An alert stays in its sub-user's outbox
 * until the caller confirms it recorded it, and is handed out by every ingest until then (always the same: its `at`).
 *
 * Each ingest's sources are stored in its arrival row (tagged with the row's key count after it); the blocks as a
 * whole are snapshotted every 6 hours in 16 rows (only the changed ones are written), each saying up to which row
 * and tag it holds, and read back into memory, with the arrival rows' later chunks, when first needed. The alert state is one row, written only when it changes (new blocks are rare once a sub-user is known).
 */
export class ClientSources {
  readonly #sql: SqlStorage;
  readonly #arrivals: ArrivalRows;
  readonly #alerts = new Map<string, AlertState>();
  /** Per sub-user, per block (null until first needed). */
  #blocks: Map<string, Map<string, SourceRow>> | null = null;
  /** When the blocks were last snapshotted, and the arrival row and tag the snapshot holds up to. */
  #snapshot = { at: 0, minute: -1, tag: 0 };
  /** The latest chunk the blocks in memory hold. */
  #latest = { minute: -1, tag: 0 };
  readonly #dirty = new Set<number>();

  constructor(sql: SqlStorage, arrivals: ArrivalRows) {
    this.#sql = sql;
    this.#arrivals = arrivals;
    for (const shard of sql.exec<{ at: number; minute: number; tag: number }>(
      "SELECT at, minute, tag FROM source_shards",
    )) {
      if (isLater(shard, this.#snapshot)) this.#snapshot = { at: shard.at, minute: shard.minute, tag: shard.tag };
    }
    const stored = sql.exec<{ body: string }>("SELECT body FROM source_alert_state WHERE id = 1").toArray()[0];
    for (const [subuserId, state] of Object.entries(JSON.parse(stored?.body ?? "{}") as Record<string, AlertState>)) {
      this.#alerts.set(subuserId, state);
    }
  }

  /**
   * Adds an ingest's sources (each part once: the caller's exactly-once step), counts the new blocks and forms the
   * alerts now due (also those that waited for their window, with or without new sources).
   */
  ingest(sources: SourceRow[], chunk: { minute: number; tag: number }, at: number): void {
    let changed = false;
    if (sources.length > 0) {
      const blocks = this.#load();
      this.#latest = chunk;
      const fresh = new Map<string, string[]>();
      for (const source of sources) {
        const known = this.#add(blocks, source);
        const subuserId = source[SOURCE.subuserId];
        if (!known) fresh.set(subuserId, [...(fresh.get(subuserId) ?? []), source[SOURCE.block]]);
      }
      for (const [subuserId, newBlocks] of fresh) {
        const state = this.#alerts.get(subuserId) ?? {
          lastAt: null,
          unreported: 0,
          unreportedBlocks: [],
          outbox: null,
        };
        state.unreported += newBlocks.length;
        state.unreportedBlocks = [...state.unreportedBlocks, ...newBlocks.sort()].slice(0, NEW_SOURCE_ALERT_BLOCKS);
        this.#alerts.set(subuserId, state);
        this.#cap(blocks, subuserId);
        changed = true;
      }
    }
    for (const state of this.#alerts.values()) {
      if (state.unreported === 0 || state.outbox !== null) continue;
      if (state.lastAt !== null && state.lastAt > at - NEW_SOURCE_ALERT_WINDOW_MS) continue;
      state.outbox = { at, newBlocks: state.unreported, blocks: state.unreportedBlocks };
      state.lastAt = at;
      state.unreported = 0;
      state.unreportedBlocks = [];
      changed = true;
    }
    if (changed) this.#saveAlerts();
  }

  /** The alerts not confirmed yet. */
  alerts(): SourceAlert[] {
    return [...this.#alerts].flatMap(([subuserId, state]) => (state.outbox ? [{ subuserId, ...state.outbox }] : []));
  }

  /**
   * The caller handled these alerts: they leave the outboxes (a newer alert in an outbox stays). One it did not
   * record (its sub-user did not opt in) does not start a window: an opt-in later is not held back by it.
   */
  confirm(receipts: SourceAlertReceipt[]): void {
    let changed = false;
    for (const receipt of receipts) {
      const state = this.#alerts.get(receipt.subuserId);
      if (state?.outbox?.at !== receipt.at) continue;
      state.outbox = null;
      if (!receipt.recorded) state.lastAt = null;
      changed = true;
    }
    if (changed) this.#saveAlerts();
  }

  /** A sub-user's blocks seen in the last 30 days, newest first seen first; keyset after `(firstSeen, block)`. */
  list(
    subuserId: string,
    after: { firstSeen: number; block: string } | null,
    limit: number,
    at: number,
  ): SourceEntry[] {
    const { block, firstSeen, lastSeen } = SOURCE;
    return [...(this.#load().get(subuserId)?.values() ?? [])]
      .filter((row) => {
        if (row[lastSeen] < at - SOURCES_KEPT_MS) return false;
        return (
          !after || row[firstSeen] < after.firstSeen || (row[firstSeen] === after.firstSeen && row[block] < after.block)
        );
      })
      .sort((a, b) => b[firstSeen] - a[firstSeen] || (a[block] < b[block] ? 1 : a[block] > b[block] ? -1 : 0))
      .slice(0, limit)
      .map(sourceEntry);
  }

  /** A sub-user's blocks seen since `since`, the heaviest (bytes over their 30 days) first. */
  activeSince(subuserId: string, since: number, limit: number): SourceEntry[] {
    const { block, lastSeen, bytes } = SOURCE;
    return [...(this.#load().get(subuserId)?.values() ?? [])]
      .filter((row) => row[lastSeen] >= since)
      .sort((a, b) => b[bytes] - a[bytes] || (a[block] < b[block] ? -1 : 1))
      .slice(0, limit)
      .map(sourceEntry);
  }

  /** Whether an arrival row about to be overwritten holds sources no snapshot has yet. */
  needsSnapshotBefore(rowMinute: number, rowSources: number): boolean {
    return rowSources > 0 && rowMinute >= this.#snapshot.minute;
  }

  /**
   * Every 6 hours (or before an arrival row with sources not snapshotted is overwritten): writes the changed shards
   * and forgets blocks not seen for 30 days and alert states with nothing left to report.
   */
  maintain(at: number, force = false): void {
    if (!force && at - this.#snapshot.at < SOURCES_SNAPSHOT_MS) return;
    const blocks = this.#load();
    for (const [subuserId, own] of blocks) {
      for (const [block, row] of own) {
        if (row[SOURCE.lastSeen] >= at - SOURCES_KEPT_MS) continue;
        own.delete(block);
        this.#dirty.add(shardOf(subuserId));
      }
      if (own.size === 0) blocks.delete(subuserId);
    }
    for (const shard of this.#dirty) {
      const rows = [...blocks]
        .filter(([subuserId]) => shardOf(subuserId) === shard)
        .flatMap(([, own]) => [...own.values()]);
      this.#sql.exec(
        `INSERT INTO source_shards (shard, at, minute, tag, body) VALUES (?, ?, ?, ?, ?) ON CONFLICT (shard)
         DO UPDATE SET at = excluded.at, minute = excluded.minute, tag = excluded.tag, body = excluded.body`,
        shard,
        at,
        this.#latest.minute,
        this.#latest.tag,
        packJson(rows),
      );
    }
    this.#dirty.clear();
    this.#snapshot = { at, ...this.#latest };
    let pruned = false;
    for (const [subuserId, state] of this.#alerts) {
      if (state.unreported > 0 || state.outbox !== null || (state.lastAt ?? 0) >= at - SOURCES_KEPT_MS) continue;
      this.#alerts.delete(subuserId);
      pruned = true;
    }
    if (pruned) this.#saveAlerts();
  }

  /** Adds a source to the blocks; whether its block was known. */
  #add(blocks: Map<string, Map<string, SourceRow>>, source: SourceRow): boolean {
    const own = ownBlocks(blocks, source);
    const known = own.get(source[SOURCE.block]);
    this.#dirty.add(shardOf(source[SOURCE.subuserId]));
    if (!known) {
      own.set(source[SOURCE.block], [...source] as SourceRow);
      return false;
    }
    const { firstSeen, lastSeen, requests, bytes } = SOURCE;
    known[firstSeen] = Math.min(known[firstSeen], source[firstSeen]);
    known[lastSeen] = Math.max(known[lastSeen], source[lastSeen]);
    known[requests] += source[requests];
    known[bytes] += source[bytes];
    return true;
  }

  /** At most 1,000 blocks per sub-user: the least recently seen go. */
  #cap(blocks: Map<string, Map<string, SourceRow>>, subuserId: string): void {
    const own = blocks.get(subuserId);
    if (!own || own.size <= SOURCES_PER_SUBUSER) return;
    const { block, lastSeen } = SOURCE;
    const newest = [...own.values()].sort(
      (a, b) => b[lastSeen] - a[lastSeen] || (a[block] < b[block] ? -1 : a[block] > b[block] ? 1 : 0),
    );
    for (const row of newest.slice(SOURCES_PER_SUBUSER)) own.delete(row[block]);
  }

  /** The blocks: the snapshot, and every arrival row's sources since it. */
  #load(): Map<string, Map<string, SourceRow>> {
    if (this.#blocks) return this.#blocks;
    const blocks = new Map<string, Map<string, SourceRow>>();
    this.#blocks = blocks;
    for (const shard of this.#sql.exec<{ body: ArrayBuffer }>("SELECT body FROM source_shards")) {
      for (const row of unpackJson<SourceRow[]>(shard.body, [])) ownBlocks(blocks, row).set(row[SOURCE.block], row);
    }
    this.#latest = { minute: this.#snapshot.minute, tag: this.#snapshot.tag };
    for (const head of this.#arrivals.heads().sort((a, b) => a.minute - b.minute)) {
      if (head.minute < this.#snapshot.minute) continue;
      for (const [tag, sources] of this.#arrivals.column(head.slot, "sources")) {
        const chunk = { minute: head.minute, tag };
        if (!isLater(chunk, this.#snapshot)) continue;
        for (const source of sources) this.#add(blocks, source);
        if (isLater(chunk, this.#latest)) this.#latest = chunk;
      }
    }
    return blocks;
  }

  #saveAlerts(): void {
    this.#sql.exec(
      "INSERT INTO source_alert_state (id, body) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body",
      JSON.stringify(Object.fromEntries(this.#alerts)),
    );
  }
}

/** The blocks of a row's sub-user (a new, empty map for a sub-user seen first). */
function ownBlocks(blocks: Map<string, Map<string, SourceRow>>, row: SourceRow): Map<string, SourceRow> {
  const subuserId = row[SOURCE.subuserId];
  let own = blocks.get(subuserId);
  if (!own) {
    own = new Map();
    blocks.set(subuserId, own);
  }
  return own;
}

function sourceEntry(row: SourceRow): SourceEntry {
  const { block, firstSeen, lastSeen, requests, bytes } = SOURCE;
  return {
    block: row[block],
    firstSeen: row[firstSeen],
    lastSeen: row[lastSeen],
    requests: row[requests],
    bytes: row[bytes],
  };
}

function isLater(a: { minute: number; tag: number }, b: { minute: number; tag: number }): boolean {
  return a.minute > b.minute || (a.minute === b.minute && a.tag > b.tag);
}

function shardOf(subuserId: string): number {
  return Math.floor(uniformHash(subuserId) * SHARDS);
}

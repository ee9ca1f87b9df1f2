import { HOUR, MINUTE } from "../../platform/clock";
import type { BandwidthProduct } from "../../vocabulary";
import { packJson, unpackJson } from "./blob-codec";
import { BoundedCache } from "./bounded-cache";
import { type CellRow, type RequestSampleFields, SAMPLE, type SessionDelta, type SourceRow } from "./contract";
import { type DomainSums, MINUTE_TOTAL, type MinuteTotal } from "./summary";

/** One row per minute of arrival, kept 25 hours (the 1-minute resolution answers the last 24) in a ring of slots. */
export const ARRIVAL_SLOTS = 1500;
export const ARRIVALS_KEPT_MS = ARRIVAL_SLOTS * MINUTE;
/** A copy of a usage part arrives at most this long before its first arrival's time (clocks of two machines). */
export const RECEIVED_SKEW_MS = MINUTE;
/** Parts from before `receivedAt` was carried: their key is looked for from this long before their oldest usage. */
const LEGACY_LOOKBACK_MS = HOUR;
/**
 * A row may hold 2 MB (SQLite in a Durable Object). An arrival row keeps its blob columns (cells and domains,
 * samples, sessions, sources) while it stays within `ROW_BYTES`; past it (the sessions of the busiest accounts'
 * minutes, a backfill of many days and sub-users arriving in one minute), its largest columns go in pages of
 * `arrival_pages`, one row written per MB, their columns left empty.
 */
const ROW_BYTES = 1_800_000;
const PAGE_BYTES = 1_000_000;
const BLOB_COLUMNS = ["body", "samples", "sessions", "sources"] as const;
type BlobColumn = (typeof BLOB_COLUMNS)[number];
/** Arrival rows read back and kept decoded, by the rows they hold (cells, domains, samples, sessions, sources). */
const CACHED_ROW_ITEMS = 20_000;

/** A request-log candidate as the store keeps it: the rate below which it is kept replaces its weight. */
export type LoggedSample = [...RequestSampleFields, keptBelow: number | null];

/** Where each field of a `LoggedSample` stands: the request sample's fields, then the rate it is kept below. */
export const LOGGED_SAMPLE = { ...SAMPLE, keptBelow: 12 } as const;

/**
 * What an ingest metered, per settlement number: bytes per pool (added up), capped sub-users' figures per cap period
 * (the highest; `months`, a name kept from when months were the only period).
 */
export interface RowMeter {
  pools: Partial<Record<BandwidthProduct, number>>;
  months: Record<string, number>;
}

/** The small columns of a row, held in memory for every slot. */
export interface ArrivalHead {
  slot: number;
  /** The minute the usage arrived in: the row's identity. */
  minute: number;
  /** The earliest and latest minute of the usage in it (records can be late, or a little early). */
  firstMinute: number;
  lastMinute: number;
  /** Per record minute and product. */
  totals: MinuteTotal[];
}

/** The bulk of a row (one compressed blob). */
export interface ArrivalContent {
  cells: CellRow[];
  domains: DomainSums[];
}

export interface ArrivalRow extends ArrivalHead {
  metered: Record<string, RowMeter>;
  /** The usage parts applied in this row: a part is applied once, in one row. */
  keys: string[];
  sessions: SessionDelta[];
  samples: LoggedSample[];
  /** Client sources per ingest, tagged with the row's key count after it (snapshots say up to where they hold). */
  sources: SourceChunk[];
  content: ArrivalContent;
}

export type SourceChunk = [tag: number, sources: SourceRow[]];

type StoredRow = {
  slot: number;
  minute: number;
  first_minute: number;
  last_minute: number;
  totals: string;
  metered: string;
  keys: string;
  sessions: ArrayBuffer | null;
  samples: ArrayBuffer | null;
  sources: ArrayBuffer | null;
  body: ArrayBuffer;
};

export const ARRIVALS_TABLE = `CREATE TABLE IF NOT EXISTS arrivals (
  slot INTEGER PRIMARY KEY, minute INTEGER NOT NULL, first_minute INTEGER NOT NULL, last_minute INTEGER NOT NULL,
  totals TEXT NOT NULL, metered TEXT NOT NULL, keys TEXT NOT NULL, sessions BLOB, samples BLOB, sources BLOB,
  body BLOB NOT NULL)`;

/** The blob columns of arrival rows past `ROW_BYTES`, in pages (the row's column is then empty). */
export const ARRIVAL_PAGES_TABLE = `CREATE TABLE IF NOT EXISTS arrival_pages (
  slot INTEGER NOT NULL, col TEXT NOT NULL, page INTEGER NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (slot, col, page))`;

/**
 * The finest tier: everything an account's store took in one minute of arrival, in one row — usage cells (per
 * record minute and dimensions), domains, client sources, request-log candidates, sessions' usage, the part keys and
 * what was metered. Every ingest writes exactly one row (the current minute's, merged), whatever it holds; a slot is
 * reused 25 hours later by overwriting, so ageing out costs no delete. The heads (minutes and per-minute totals)
 * live in memory; blobs are read when asked for.
 */
export class ArrivalRows {
  readonly #sql: SqlStorage;
  readonly #heads = new Map<number, ArrivalHead>();
  /** Requests per record minute, all products, over every row (the request log's sampling rate). */
  readonly #minuteRequests = new Map<number, number>();
  /** Part keys of rows read so far, by slot (a row's keys change only through `write`). */
  readonly #keys = new Map<number, Set<string>>();
  /** Rows read lately (queries read the same recent rows again and again). */
  readonly #read = new BoundedCache<number, ArrivalRow>(CACHED_ROW_ITEMS, itemsOf);
  /** The columns in `arrival_pages`, as `slot:column`. */
  readonly #paged = new Set<string>();
  #open: ArrivalRow | null = null;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
    for (const row of sql.exec<Pick<StoredRow, "slot" | "minute" | "first_minute" | "last_minute" | "totals">>(
      "SELECT slot, minute, first_minute, last_minute, totals FROM arrivals",
    )) {
      this.#remember({
        slot: row.slot,
        minute: row.minute,
        firstMinute: row.first_minute,
        lastMinute: row.last_minute,
        totals: JSON.parse(row.totals) as MinuteTotal[],
      });
    }
    for (const { slot, col } of sql.exec<{ slot: number; col: string }>(
      "SELECT DISTINCT slot, col FROM arrival_pages",
    )) {
      this.#paged.add(`${slot}:${col}`);
    }
  }

  static slotOf(minute: number): number {
    return Math.floor(minute / MINUTE) % ARRIVAL_SLOTS;
  }

  heads(): ArrivalHead[] {
    return [...this.#heads.values()];
  }

  /** Rows holding usage of record minutes in `[from, to)`. */
  overlapping(from: number, to: number): ArrivalHead[] {
    return this.heads().filter((head) => head.firstMinute < to && head.lastMinute >= from);
  }

  /** The account's requests (all products) in a record minute, as the rows count them. */
  requestsIn(minute: number): number {
    return this.#minuteRequests.get(minute) ?? 0;
  }

  /** Whether part `key` was applied in a row that arrived at `since` (less the skew between clocks) or later. */
  applied(key: string, since: number): boolean {
    const from = since - RECEIVED_SKEW_MS;
    for (const head of this.#heads.values()) {
      if (head.minute + MINUTE <= from) continue;
      if (this.#keysOf(head.slot).has(key)) return true;
    }
    return false;
  }

  /** Where to look for a part without `receivedAt`: from an hour before its oldest usage. */
  static legacyReceivedAt(oldestUsage: number): number {
    return oldestUsage - LEGACY_LOOKBACK_MS + RECEIVED_SKEW_MS;
  }

  /**
   * The row of the minute `at` arrives in, to add to and `write`: the open one, read back, or a new one. When its
   * slot still holds a row of 25 hours ago, that row comes back as `replaced` so the caller folds and settles what
   * it holds before it is overwritten.
   */
  current(at: number): { row: ArrivalRow; replaced: ArrivalRow | null } {
    const minute = at - (at % MINUTE);
    if (this.#open?.minute === minute) return { row: this.#open, replaced: null };
    const slot = ArrivalRows.slotOf(minute);
    const head = this.#heads.get(slot);
    if (head?.minute === minute) {
      this.#open = this.read(slot);
      return { row: this.#open, replaced: null };
    }
    const row = ArrivalRows.empty(minute);
    // A replaced row stays readable (its fold reads it) until the new one is written over it.
    if (head) return { row, replaced: this.read(slot) };
    this.#open = row;
    return { row, replaced: null };
  }

  /** A new row for the minute of arrival `minute`, holding nothing yet. */
  static empty(minute: number): ArrivalRow {
    return {
      slot: ArrivalRows.slotOf(minute),
      minute,
      firstMinute: minute,
      lastMinute: minute,
      totals: [],
      metered: {},
      keys: [],
      sessions: [],
      samples: [],
      sources: [],
      content: { cells: [], domains: [] },
    };
  }

  /** A whole row (the open one as it stands). */
  read(slot: number): ArrivalRow {
    if (this.#open?.slot === slot) return this.#open;
    const cached = this.#read.get(slot);
    if (cached) return cached;
    const row = this.#decode(this.#sql.exec<StoredRow>("SELECT * FROM arrivals WHERE slot = ?", slot).one());
    this.#read.set(slot, row);
    return row;
  }

  #decode(row: StoredRow): ArrivalRow {
    return {
      slot: row.slot,
      minute: row.minute,
      firstMinute: row.first_minute,
      lastMinute: row.last_minute,
      totals: JSON.parse(row.totals) as MinuteTotal[],
      metered: JSON.parse(row.metered) as Record<string, RowMeter>,
      keys: JSON.parse(row.keys) as string[],
      sessions: unpackJson<SessionDelta[]>(this.#blob(row.slot, "sessions", row.sessions), []),
      samples: unpackJson<LoggedSample[]>(this.#blob(row.slot, "samples", row.samples), []),
      sources: unpackJson<SourceChunk[]>(this.#blob(row.slot, "sources", row.sources), []),
      content: unpackJson<ArrivalContent>(this.#blob(row.slot, "body", row.body), { cells: [], domains: [] }),
    };
  }

  /** A blob column as stored: in its row, or its pages joined. */
  #blob(slot: number, column: BlobColumn, inRow: ArrayBuffer | null): ArrayBuffer | Uint8Array | null {
    if (!this.#paged.has(`${slot}:${column}`)) return inRow;
    const pages = this.#sql
      .exec<{ bytes: ArrayBuffer }>(
        "SELECT bytes FROM arrival_pages WHERE slot = ? AND col = ? ORDER BY page",
        slot,
        column,
      )
      .toArray()
      .map((page) => new Uint8Array(page.bytes));
    const blob = new Uint8Array(pages.reduce((sum, page) => sum + page.length, 0));
    let offset = 0;
    for (const page of pages) {
      blob.set(page, offset);
      offset += page.length;
    }
    return blob;
  }

  /**
   * What a row keeps of its blob columns: all of them while the row stays within `ROW_BYTES`, else the largest go
   * in pages (their columns left empty) until it does. A slot's old pages are removed.
   */
  #placed(slot: number, textBytes: number, blobs: Record<BlobColumn, Uint8Array | null>) {
    for (const column of BLOB_COLUMNS) {
      if (this.#paged.delete(`${slot}:${column}`)) {
        this.#sql.exec("DELETE FROM arrival_pages WHERE slot = ? AND col = ?", slot, column);
      }
    }
    const size = () => BLOB_COLUMNS.reduce((sum, column) => sum + (blobs[column]?.length ?? 0), textBytes);
    while (size() > ROW_BYTES) {
      const largest = BLOB_COLUMNS.reduce((a, b) => ((blobs[b]?.length ?? 0) > (blobs[a]?.length ?? 0) ? b : a));
      const blob = blobs[largest];
      if (!blob?.length) break;
      for (let page = 0; page * PAGE_BYTES < blob.length; page++) {
        const bytes = blob.subarray(page * PAGE_BYTES, (page + 1) * PAGE_BYTES);
        this.#sql.exec(
          "INSERT INTO arrival_pages (slot, col, page, bytes) VALUES (?, ?, ?, ?)",
          slot,
          largest,
          page,
          bytes,
        );
      }
      this.#paged.add(`${slot}:${largest}`);
      blobs[largest] = new Uint8Array(0);
    }
    return blobs;
  }

  /** One column of a row, without decoding the others. */
  column<K extends "samples" | "sessions" | "sources" | "metered">(slot: number, column: K): ArrivalRow[K] {
    if (this.#open?.slot === slot) return this.#open[column];
    const value = this.#sql
      .exec<Record<string, SqlStorageValue>>(`SELECT ${column} FROM arrivals WHERE slot = ?`, slot)
      .one()[column];
    if (column === "metered") return JSON.parse(value as string) as ArrivalRow[K];
    const blob = this.#blob(slot, column as BlobColumn, value as ArrayBuffer | null);
    return unpackJson(blob, [] as unknown) as ArrivalRow[K];
  }

  /** Writes a row: one row written, however much it holds (and a page per MB of a column past its room). */
  write(row: ArrivalRow): void {
    const texts = [JSON.stringify(row.totals), JSON.stringify(row.metered), JSON.stringify(row.keys)];
    const blobs = this.#placed(
      row.slot,
      texts.reduce((sum, text) => sum + text.length, 0),
      {
        sessions: row.sessions.length > 0 ? packJson(row.sessions) : null,
        samples: row.samples.length > 0 ? packJson(row.samples) : null,
        sources: row.sources.length > 0 ? packJson(row.sources) : null,
        body: packJson(row.content),
      },
    );
    this.#sql.exec(
      `INSERT INTO arrivals (slot, minute, first_minute, last_minute, totals, metered, keys, sessions, samples,
         sources, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (slot) DO UPDATE SET minute = excluded.minute, first_minute = excluded.first_minute,
         last_minute = excluded.last_minute, totals = excluded.totals, metered = excluded.metered,
         keys = excluded.keys, sessions = excluded.sessions, samples = excluded.samples, sources = excluded.sources,
         body = excluded.body`,
      row.slot,
      row.minute,
      row.firstMinute,
      row.lastMinute,
      ...texts,
      blobs.sessions,
      blobs.samples,
      blobs.sources,
      blobs.body,
    );
    this.#forget(row.slot);
    this.#remember(row);
    this.#keys.set(row.slot, new Set(row.keys));
    this.#open = row;
  }

  /** Deletes the rows `expired` chooses (rows left by a quiet account: a busy one overwrites them). */
  deleteWhere(expired: (head: ArrivalHead) => boolean): void {
    for (const head of this.heads()) {
      if (!expired(head)) continue;
      this.#sql.exec("DELETE FROM arrivals WHERE slot = ?", head.slot);
      this.#placed(head.slot, 0, { body: null, samples: null, sessions: null, sources: null });
      this.#forget(head.slot);
      if (this.#open?.slot === head.slot) this.#open = null;
    }
  }

  #keysOf(slot: number): Set<string> {
    let keys = this.#keys.get(slot);
    if (!keys) {
      const stored = this.#sql.exec<{ keys: string }>("SELECT keys FROM arrivals WHERE slot = ?", slot).one().keys;
      keys = new Set(JSON.parse(stored) as string[]);
      this.#keys.set(slot, keys);
    }
    return keys;
  }

  #remember(head: ArrivalHead): void {
    this.#heads.set(head.slot, {
      slot: head.slot,
      minute: head.minute,
      firstMinute: head.firstMinute,
      lastMinute: head.lastMinute,
      // A copy: the open row's totals grow in place until it is written.
      totals: head.totals.map((total) => [...total] as MinuteTotal),
    });
    for (const total of head.totals) {
      const minute = total[MINUTE_TOTAL.minute];
      this.#minuteRequests.set(minute, (this.#minuteRequests.get(minute) ?? 0) + total[MINUTE_TOTAL.requests]);
    }
  }

  #forget(slot: number): void {
    const head = this.#heads.get(slot);
    if (!head) return;
    for (const total of head.totals) {
      const minute = total[MINUTE_TOTAL.minute];
      const left = (this.#minuteRequests.get(minute) ?? 0) - total[MINUTE_TOTAL.requests];
      if (left > 0) this.#minuteRequests.set(minute, left);
      else this.#minuteRequests.delete(minute);
    }
    this.#heads.delete(slot);
    this.#keys.delete(slot);
    this.#read.delete(slot);
  }
}

/** What a row holds, counted in items (its weight in memory). */
function itemsOf(row: ArrivalRow): number {
  const sources = row.sources.reduce((sum, [, chunk]) => sum + chunk.length, 0);
  return row.content.cells.length + row.content.domains.length + row.samples.length + row.sessions.length + sources;
}

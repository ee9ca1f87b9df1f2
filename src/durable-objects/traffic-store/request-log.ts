import { HOUR, MINUTE } from "../../platform/clock";
import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";
import { keptBelowRate, type RequestSample, type SampleCandidate, samplingRate, type TrafficProduct } from "./contract";

/** The sampled request log keeps, per product, the newest 1,000 requests of the last 48 hours (spec §8.5). */
export const REQUEST_LOG_SIZE = 1000;
export const REQUEST_LOG_KEPT_MS = 48 * HOUR;

/** The request log's storage steps (`migrate`): append, never edit. */
const REQUEST_LOG_STORAGE: StorageStep[] = [
  // 1: the table. A log created before `kept_below` gains it: its entries (null) were sampled at their minute's rate
  // once, and stay.
  (sql) => {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS request_log (
        product TEXT NOT NULL, ts INTEGER NOT NULL, request_id TEXT NOT NULL, subuser TEXT NOT NULL,
        method TEXT NOT NULL, target_host TEXT NOT NULL, status INTEGER NOT NULL, bytes INTEGER NOT NULL,
        exit_ip TEXT NOT NULL, exit_geo TEXT NOT NULL, exit_asn INTEGER NOT NULL, tag TEXT, kept_below REAL,
        PRIMARY KEY (product, ts, request_id)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS request_log_subuser ON request_log (product, subuser, ts);
    `);
    const columns = sql.exec<{ name: string }>("PRAGMA table_info(request_log)").toArray();
    if (!columns.some((column) => column.name === "kept_below")) {
      sql.exec("ALTER TABLE request_log ADD COLUMN kept_below REAL");
    }
  },
];

/**
 * The sampled request log of one account (not for billing). Each candidate the producer sent stands for `weight`
 * of the account's requests in its minute of the batch; it is kept with probability min(1, 100 / requests-per-minute
 * × weight), decided by a hash of its request id, so a redelivered message decides the same way. A minute's count
 * grows as its batches arrive: the entries already kept for it are thinned to the new count each time, so at any
 * moment a minute holds a uniform sample at its own rate (every request below 100 a minute), never one skewed to
 * the minute's first batches.
 */
export class RequestLog {
  readonly #sql: SqlStorage;

  constructor(storage: AreaStorage) {
    this.#sql = storage.sql;
    migrate(storage, "request_log", REQUEST_LOG_STORAGE);
  }

  /**
   * Keeps the candidates `keepsSample` chooses at the account's rate (`requestsInMinute`: all products, this
   * message's requests included), and thins the entries of every minute `countedMinutes` (the minutes whose count
   * just grew) to that minute's new count; minutes past the log's 48 hours have no entries to thin.
   */
  add(
    candidates: SampleCandidate[],
    countedMinutes: number[],
    requestsInMinute: (minute: number) => number,
    at: number,
  ): void {
    const counts = new Map<number, number>();
    const countOf = (minute: number) => {
      let count = counts.get(minute);
      if (count === undefined) {
        count = requestsInMinute(minute);
        counts.set(minute, count);
      }
      return count;
    };
    this.#thin(
      countedMinutes.filter((minute) => minute + MINUTE > at - REQUEST_LOG_KEPT_MS),
      countOf,
    );
    const kept = candidates
      .map((sample) => ({ sample, keptBelow: keptBelowRate(sample) }))
      .filter(({ sample, keptBelow }) => Math.max(1, samplingRate(sample.ts, countOf)) < keptBelow);
    if (kept.length === 0) return;
    this.#sql.exec(
      `INSERT OR IGNORE INTO request_log (product, ts, request_id, subuser, method, target_host, status, bytes,
         exit_ip, exit_geo, exit_asn, tag, kept_below)
       SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8,
         value->>9, value->>10, value->>11, value->>12 FROM json_each(?) WHERE true`,
      JSON.stringify(
        kept.map(({ sample, keptBelow }) => [
          sample.product,
          sample.ts,
          sample.requestId,
          sample.subuserId,
          sample.method,
          sample.targetHost,
          sample.status,
          sample.bytes,
          sample.exitIp,
          sample.exitGeo,
          sample.exitAsn,
          sample.tag,
          // JSON has no Infinity: null, never thinned (a hash of exactly 0).
          Number.isFinite(keptBelow) ? keptBelow : null,
        ]),
      ),
    );
    for (const product of new Set(kept.map(({ sample }) => sample.product))) this.#trim(product);
  }

  /** Newest first. */
  list(query: { product: TrafficProduct; subuserId?: string; limit: number }, at: number): RequestSample[] {
    const rows = this.#sql
      .exec<LogRow>(
        `SELECT * FROM request_log WHERE product = ? AND ts > ? ${query.subuserId ? "AND subuser = ?" : ""}
         ORDER BY ts DESC, request_id DESC LIMIT ?`,
        query.product,
        at - REQUEST_LOG_KEPT_MS,
        ...(query.subuserId ? [query.subuserId] : []),
        query.limit,
      )
      .toArray();
    return rows.map(toSample);
  }

  /**
   * The log in `[from, to)` (within its 48 hours), oldest first, up to `limit` entries after `cursor`; `products`
   * and `subuserIds` narrow it (null: all). Report files read it a page at a time.
   */
  range(
    scope: { from: number; to: number; products: string[] | null; subuserIds: string[] | null },
    cursor: { ts: number; requestId: string } | null,
    limit: number,
    at: number,
  ): RequestSample[] {
    const anyOf = (values: string[] | null) => (values === null ? null : JSON.stringify(values));
    return this.#sql
      .exec<LogRow>(
        `SELECT * FROM request_log WHERE ts >= ? AND ts < ?
           AND (?3 IS NULL OR product IN (SELECT value FROM json_each(?3)))
           AND (?4 IS NULL OR subuser IN (SELECT value FROM json_each(?4)))
           AND (?5 IS NULL OR (ts, request_id) > (?5, ?6))
         ORDER BY ts, request_id LIMIT ?7`,
        Math.max(scope.from, at - REQUEST_LOG_KEPT_MS),
        scope.to,
        anyOf(scope.products),
        anyOf(scope.subuserIds),
        cursor?.ts ?? null,
        cursor?.requestId ?? null,
        limit,
      )
      .toArray()
      .map(toSample);
  }

  /** Drops the entries of each minute that its count (`countOf`) no longer keeps. */
  #thin(minutes: number[], countOf: (minute: number) => number): void {
    for (const minute of minutes) {
      this.#sql.exec(
        "DELETE FROM request_log WHERE product IN ('residential', 'mobile', 'isp') AND ts >= ? AND ts < ? AND kept_below <= ?",
        minute,
        minute + MINUTE,
        Math.max(1, countOf(minute)),
      );
    }
  }

  prune(at: number): void {
    this.#sql.exec("DELETE FROM request_log WHERE ts <= ?", at - REQUEST_LOG_KEPT_MS);
  }

  #trim(product: string): void {
    this.#sql.exec(
      `DELETE FROM request_log WHERE product = ? AND (ts, request_id) < (
         SELECT ts, request_id FROM request_log WHERE product = ? ORDER BY ts DESC, request_id DESC LIMIT 1 OFFSET ?)`,
      product,
      product,
      REQUEST_LOG_SIZE - 1,
    );
  }
}

type LogRow = {
  product: TrafficProduct;
  ts: number;
  request_id: string;
  subuser: string;
  method: string;
  target_host: string;
  status: number;
  bytes: number;
  exit_ip: string;
  exit_geo: string;
  exit_asn: number;
  tag: string | null;
};

function toSample(row: LogRow): RequestSample {
  return {
    requestId: row.request_id,
    ts: row.ts,
    product: row.product,
    subuserId: row.subuser,
    method: row.method,
    targetHost: row.target_host,
    status: row.status,
    bytes: row.bytes,
    exitIp: row.exit_ip,
    exitGeo: row.exit_geo,
    exitAsn: row.exit_asn,
    tag: row.tag,
  };
}

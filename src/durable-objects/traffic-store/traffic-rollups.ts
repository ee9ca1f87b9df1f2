import { DAY, HOUR, MINUTE } from "../../platform/clock";
import { type AreaStorage, migrate } from "../shared/storage-versions";
import {
  type Cell,
  cellRow,
  type Dimension,
  type Metrics,
  RESOLUTION_MS,
  type TrafficProduct,
  type TrafficQuery,
  type TrafficRow,
} from "./contract";

const FACT_COLUMNS = "bucket, product, subuser, region, asn, tag, carrier, ip, bytes_in, bytes_out, requests, errors";
/** The measures every grouped read sums (rollup queries and report pages alike). */
export const SUMS =
  "sum(bytes_in) AS bytes_in, sum(bytes_out) AS bytes_out, sum(requests) AS requests, sum(errors) AS errors";
const ADD_EXCLUDED = `bytes_in = bytes_in + excluded.bytes_in, bytes_out = bytes_out + excluded.bytes_out,
  requests = requests + excluded.requests, errors = errors + excluded.errors`;
const FACT_KEY = "bucket, product, subuser, region, asn, tag, carrier, ip";
export const TIERS: Array<{ table: string; span: number; keptMs: number }> = [
  { table: "fact_5m", span: 5 * MINUTE, keptMs: 14 * DAY + HOUR },
  { table: "fact_1h", span: HOUR, keptMs: 90 * DAY + DAY },
  { table: "fact_1d", span: DAY, keptMs: 400 * DAY },
];
/** `fact_1m` keeps every minute of the last 25 hours (the 1-minute resolution answers the last 24). */
export const FACT_1M_KEPT_MS = 25 * HOUR;
const CUM_THINNED_AFTER_MS = 91 * DAY;
/** Pending rows past this many are folded at once rather than at the next minute, so reads of it stay short. */
export const PENDING_FOLD_ROWS = 200_000;
const MINUTE_REQUESTS_KEPT_MS = 2 * HOUR;
/** The column of each dimension (`'' ` is the total's value). */
const DIMENSION_COLUMN: Record<Dimension | "total", string> = {
  total: "''",
  subuser: "subuser",
  region: "region",
  asn: "CAST(asn AS TEXT)",
  tag: "tag",
  ip: "ip",
};
const CUM_DIMENSIONS = Object.keys(DIMENSION_COLUMN) as Array<Dimension | "total">;

/**
 * The product column of a tier read's condition. SQLite, without statistics, takes `product = ?` to the
 * `(product, subuser, bucket)` index and reads every row of the product (85 ms instead of 0.3 for an hour of
 * `fact_5m` in a store of 80,000 rows); unless a sub-user is named as well, `+product` keeps the term off that
 * index, so the read seeks its time range on the primary key (bucket first). The price: a range spanning most of a
 * tier's retention reads the other products' rows of that range too, a bounded factor (at most three products).
 */
export function productColumn(subuserNamed: boolean): string {
  return subuserNamed ? "product" : "+product";
}

/**
 * Traffic rollups of one account, exact at every resolution (SQLite, synchronous).
 *
 * - Ingest appends each message's cells (usage summed per minute and dimensions) to `pending`: one set-based
 *   insert into a table without a key, the cheapest write SQLite has.
 * - `fold()` (the store's alarm, about once a minute) sums `pending` into the tiers — `fact_1m` (every minute of
 *   the last 25 hours), `fact_5m` (kept 14
 *   days), `fact_1h` (90 days), `fact_1d` (400 days) — and into `cum`, cumulative totals per series (a product and
 *   one dimension value: the total, a sub-user, a region, an ASN, a tag, an IP) at the end of each hour. A delta is
 *   always in exactly one of `pending` or the folded tables, so folding never changes a total.
 * - A total over `[from, to)` for every value of a dimension is then `F(to) − F(from)`, where F(t) is the series'
 *   cumulative total before t: one index seek per series instead of a scan of its rows; the partial hour at an
 *   unaligned t comes from the finest tier that still holds it.
 */
export class Rollups {
  readonly #sql: SqlStorage;

  constructor(storage: AreaStorage) {
    this.#sql = storage.sql;
    migrate(storage, "rollups", [
      // 1: the tiers and series; a store from before converts `cum_series` and its keyed `pending`.
      () => {
        this.#createTables();
        this.#createCumLast();
        this.#createPending();
      },
    ]);
  }

  /** The tiers, the cumulative series and their helpers (step 1). Steps are appended to the list above, never edited. */
  #createTables(): void {
    const fact = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
      bucket INTEGER NOT NULL, product TEXT NOT NULL, subuser TEXT NOT NULL, region TEXT NOT NULL,
      asn INTEGER NOT NULL, tag TEXT NOT NULL, carrier TEXT NOT NULL, ip TEXT NOT NULL,
      bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL, requests INTEGER NOT NULL, errors INTEGER NOT NULL,
      PRIMARY KEY (${FACT_KEY})) WITHOUT ROWID;`;
    const cum = (table: string) => `CREATE TABLE IF NOT EXISTS ${table} (
      product TEXT NOT NULL, dim TEXT NOT NULL, value TEXT NOT NULL, hour INTEGER NOT NULL,
      bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL, requests INTEGER NOT NULL, errors INTEGER NOT NULL,
      PRIMARY KEY (product, dim, value, hour)) WITHOUT ROWID;`;
    this.#sql.exec(`
      ${fact("fact_1m")} ${fact("fact_5m")} ${fact("fact_1h")} ${fact("fact_1d")}
      ${cum("cum")} ${cum("fold_deltas")}
      CREATE TABLE IF NOT EXISTS asn_carriers (asn INTEGER PRIMARY KEY, carrier TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS cum_thinned (day INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS minute_requests (minute INTEGER PRIMARY KEY, requests INTEGER NOT NULL);
      ${TIERS.map((t) => `CREATE INDEX IF NOT EXISTS ${t.table}_subuser ON ${t.table} (product, subuser, bucket);`).join("\n")}
    `);
  }

  /**
   * `cum_last` is every series with the hour of its first `cum` row and its newest row. A range's boundary after
   * the newest row reads it here, and one before the first row is zero: only a boundary between the two seeks
   * `cum`. It replaced `cum_series`, the list of series alone, and was filled from `cum` once.
   */
  #createCumLast(): void {
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS cum_last (
      product TEXT NOT NULL, dim TEXT NOT NULL, value TEXT NOT NULL, first_hour INTEGER NOT NULL, hour INTEGER NOT NULL,
      bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL, requests INTEGER NOT NULL, errors INTEGER NOT NULL,
      PRIMARY KEY (product, dim, value)) WITHOUT ROWID`);
    const replaced = this.#sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'cum_series'");
    if (replaced.toArray().length === 0) return;
    this.#refreshCumLast("cum");
    this.#sql.exec("DROP TABLE cum_series");
  }

  /** Sets `cum_last` of every series with rows in `source` (`cum`, or the fold's deltas) from `cum`. */
  #refreshCumLast(source: "cum" | "fold_deltas"): void {
    this.#sql.exec(
      `INSERT INTO cum_last (product, dim, value, first_hour, hour, bytes_in, bytes_out, requests, errors)
       SELECT c.product, c.dim, c.value, f.first_hour, c.hour, c.bytes_in, c.bytes_out, c.requests, c.errors
       FROM (SELECT product, dim, value, min(hour) AS first_hour FROM ${source} GROUP BY product, dim, value) f
       CROSS JOIN cum c
       WHERE c.product = f.product AND c.dim = f.dim AND c.value = f.value
         AND c.hour = (SELECT max(c2.hour) FROM cum c2 WHERE c2.product = f.product AND c2.dim = f.dim AND c2.value = f.value)
       ON CONFLICT DO UPDATE SET first_hour = min(first_hour, excluded.first_hour), hour = excluded.hour,
         bytes_in = excluded.bytes_in, bytes_out = excluded.bytes_out, requests = excluded.requests,
         errors = excluded.errors`,
    );
  }

  /**
   * `pending` is a heap: a delta per message and cell, summed by the fold. A store from before kept it keyed and
   * wrote `fact_1m` at ingest: its pending deltas are already in `fact_1m`, so they are folded into the coarser
   * tiers only, once, before the heap replaces it.
   */
  #createPending(): void {
    const existing = this.#sql
      .exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'pending'")
      .toArray()[0];
    if (existing?.sql.includes("WITHOUT ROWID")) {
      this.#foldPending({ into1m: false });
      this.#sql.exec("DROP TABLE pending");
    }
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS pending (
      bucket INTEGER NOT NULL, product TEXT NOT NULL, subuser TEXT NOT NULL, region TEXT NOT NULL,
      asn INTEGER NOT NULL, tag TEXT NOT NULL, carrier TEXT NOT NULL, ip TEXT NOT NULL,
      bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL, requests INTEGER NOT NULL, errors INTEGER NOT NULL)`);
  }

  /**
   * Appends messages' cells to `pending` (and the carrier of each mobile ASN, and the account's requests per
   * minute, which the request log samples by). Returns how many rows `pending` gained.
   */
  ingest(cells: Cell[]): number {
    if (cells.length === 0) return 0;
    const rows = JSON.stringify(cells.map(cellRow));
    this.#sql.exec(
      `INSERT INTO pending (${FACT_COLUMNS}) SELECT value->>0, value->>1, value->>2, value->>3, value->>4, value->>5,
         value->>6, value->>7, value->>8, value->>9, value->>10, value->>11 FROM json_each(?)`,
      rows,
    );
    const perMinute = new Map<number, number>();
    for (const c of cells) perMinute.set(c.minute, (perMinute.get(c.minute) ?? 0) + c.requests);
    this.#sql.exec(
      `INSERT INTO minute_requests (minute, requests) SELECT value->>0, value->>1 FROM json_each(?) WHERE true
       ON CONFLICT DO UPDATE SET requests = requests + excluded.requests`,
      JSON.stringify([...perMinute]),
    );
    const carriers = cells.filter((c) => c.carrier !== "").map((c) => [c.asn, c.carrier]);
    if (carriers.length > 0) {
      this.#sql.exec(
        `INSERT INTO asn_carriers (asn, carrier) SELECT value->>0, value->>1 FROM json_each(?) WHERE true
         ON CONFLICT DO UPDATE SET carrier = excluded.carrier`,
        JSON.stringify(carriers),
      );
    }
    return cells.length;
  }

  /** The account's requests (all products) in a minute, for the request log's sampling rate. */
  requestsInMinute(minute: number): number {
    const row = this.#sql.exec<{ requests: number }>("SELECT requests FROM minute_requests WHERE minute = ?", minute);
    return row.toArray()[0]?.requests ?? 0;
  }

  /** Sums `pending` into every tier and the cumulative series, then drops what is past its horizon. */
  fold(at: number): boolean {
    const hasPending = this.#sql.exec("SELECT 1 FROM pending LIMIT 1").toArray().length > 0;
    if (hasPending) this.#foldPending({ into1m: true });
    this.#sql.exec("DELETE FROM fact_1m WHERE bucket < ?", at - FACT_1M_KEPT_MS);
    for (const tier of TIERS) this.#sql.exec(`DELETE FROM ${tier.table} WHERE bucket < ?`, at - tier.keptMs);
    this.#sql.exec("DELETE FROM minute_requests WHERE minute < ?", at - MINUTE_REQUESTS_KEPT_MS);
    this.#thinCumulative(at);
    return hasPending;
  }

  #foldPending({ into1m }: { into1m: boolean }): void {
    const tiers = into1m ? [{ table: "fact_1m", span: MINUTE }, ...TIERS] : TIERS;
    for (const tier of tiers) {
      this.#sql.exec(
        `INSERT INTO ${tier.table} (${FACT_COLUMNS})
         SELECT bucket - bucket % ${tier.span} AS b, product, subuser, region, asn, tag, carrier, ip, ${SUMS}
         FROM pending WHERE true GROUP BY b, product, subuser, region, asn, tag, carrier, ip
         ON CONFLICT DO UPDATE SET ${ADD_EXCLUDED}`,
      );
    }
    this.#foldCumulative();
    this.#sql.exec("DELETE FROM pending");
  }

  /**
   * Beyond 90 days only days are asked for: each series keeps its last row of each day. That scans `cum`, so it
   * runs once a day, not at every fold.
   */
  #thinCumulative(at: number): void {
    const day = at - (at % DAY);
    const last = this.#sql.exec<{ day: number }>("SELECT day FROM cum_thinned").toArray()[0]?.day ?? 0;
    if (last >= day) return;
    this.#sql.exec(
      `DELETE FROM cum WHERE hour < ? AND EXISTS (SELECT 1 FROM cum later WHERE later.product = cum.product
         AND later.dim = cum.dim AND later.value = cum.value AND later.hour > cum.hour
         AND later.hour < cum.hour - cum.hour % ${DAY} + ${DAY})`,
      at - CUM_THINNED_AFTER_MS,
    );
    this.#sql.exec("DELETE FROM cum_thinned");
    this.#sql.exec("INSERT INTO cum_thinned (day) VALUES (?)", day);
  }

  /**
   * Pending deltas per series and hour into `cum`, where each row holds the series' totals up to the end of its
   * hour: rows after a delta's hour gain it, a row at its hour gains it, a new row starts from the row before.
   */
  #foldCumulative(): void {
    // One statement per dimension: SQLite in Durable Objects allows few terms in a compound SELECT.
    const perDimension = CUM_DIMENSIONS.map(
      (dim) => `INSERT INTO fold_deltas (product, dim, value, hour, bytes_in, bytes_out, requests, errors)
        SELECT product, '${dim}', ${DIMENSION_COLUMN[dim]} AS v, bucket - bucket % ${HOUR} AS h, ${SUMS}
        FROM pending WHERE true GROUP BY product, v, h`,
    );
    const sameSeries = (a: string, b: string) =>
      `${a}.product = ${b}.product AND ${a}.dim = ${b}.dim AND ${a}.value = ${b}.value`;
    const later = (metric: string) =>
      `${metric} = ${metric} + coalesce((SELECT sum(d.${metric}) FROM fold_deltas d WHERE ${sameSeries("d", "cum")} AND d.hour < cum.hour), 0)`;
    const sinceRow = (metric: string) =>
      `coalesce(p.${metric}, 0) + (SELECT sum(d2.${metric}) FROM fold_deltas d2 WHERE ${sameSeries("d2", "d")}
        AND d2.hour > coalesce(p.hour, -1) AND d2.hour <= d.hour)`;
    const metrics = ["bytes_in", "bytes_out", "requests", "errors"];
    this.#sql.exec("DELETE FROM fold_deltas");
    for (const statement of perDimension) this.#sql.exec(statement);
    this.#sql.exec(
      `UPDATE cum SET ${metrics.map(later).join(", ")}
       WHERE EXISTS (SELECT 1 FROM fold_deltas d WHERE ${sameSeries("d", "cum")} AND d.hour < cum.hour)`,
    );
    this.#sql.exec(
      `UPDATE cum SET ${metrics.map((m) => `${m} = cum.${m} + d.${m}`).join(", ")}
       FROM fold_deltas d WHERE ${sameSeries("d", "cum")} AND d.hour = cum.hour`,
    );
    this.#sql.exec(
      `INSERT INTO cum (product, dim, value, hour, bytes_in, bytes_out, requests, errors)
       SELECT d.product, d.dim, d.value, d.hour, ${metrics.map(sinceRow).join(", ")}
       FROM fold_deltas d
       LEFT JOIN cum p ON ${sameSeries("p", "d")} AND p.hour = (SELECT max(c.hour) FROM cum c
         WHERE ${sameSeries("c", "d")} AND c.hour < d.hour)
       WHERE NOT EXISTS (SELECT 1 FROM cum e WHERE ${sameSeries("e", "d")} AND e.hour = d.hour)`,
    );
    this.#refreshCumLast("fold_deltas");
    this.#sql.exec("DELETE FROM fold_deltas");
  }

  /** Whether any tier still holds usage (the daily tier outlives the others). */
  holdsData(): boolean {
    return this.#sql.exec("SELECT 1 FROM fact_1d LIMIT 1").toArray().length > 0;
  }

  /** Totals over `[from, to)` per group. */
  query(query: TrafficQuery, at: number): TrafficRow[] {
    const filtered = Object.values(query.filters).some((value) => value !== undefined);
    const rows = filtered ? this.#scan(query) : this.#cumulative(query, at);
    if (query.groupBy === null) return [rows[0] ?? { key: null, ...zero() }];
    const nonEmpty = rows.filter((row) => row.requests > 0 || row.bytesIn > 0 || row.bytesOut > 0);
    if (query.groupBy === "asn" && query.product === "mobile") {
      const carriers = new Map(
        this.#sql
          .exec<{ asn: number; carrier: string }>("SELECT asn, carrier FROM asn_carriers")
          .toArray()
          .map((r) => [r.asn, r.carrier]),
      );
      for (const row of nonEmpty) row.carrierName = carriers.get(Number(row.key)) ?? null;
    }
    return nonEmpty;
  }

  /** Unfiltered: differences of cumulative totals at the range's boundaries, per series. */
  #cumulative(query: TrafficQuery, at: number): TrafficRow[] {
    const timeGroup = timeGroupSpan(query);
    const dim: Dimension | "total" =
      query.groupBy === null || timeGroup !== null ? "total" : (query.groupBy as Dimension);
    const boundaries = timeGroup === null ? [query.from, query.to] : timeBoundaries(query.from, query.to, timeGroup);
    const totals = this.#totalsBefore(query.product, dim, boundaries, at);
    const rows: TrafficRow[] = [];
    if (timeGroup !== null) {
      const series = totals.get("") ?? boundaries.map(zero);
      for (let i = 0; i + 1 < boundaries.length; i++) {
        const start = boundaries[i] as number;
        rows.push({ key: start - (start % timeGroup), ...difference(series[i + 1], series[i]) });
      }
      return rows;
    }
    for (const [value, series] of totals) {
      rows.push({
        key: dim === "total" ? null : dim === "asn" ? Number(value) : value,
        ...difference(series[1], series[0]),
      });
    }
    // The order of the filtered path's ORDER BY: numbers (ASNs) numerically, text by code unit.
    return rows.sort((a, b) => ((a.key ?? "") < (b.key ?? "") ? -1 : (a.key ?? "") > (b.key ?? "") ? 1 : 0));
  }

  /** F(t) for every series of a dimension at each boundary: what was counted before t. */
  #totalsBefore(
    product: TrafficProduct,
    dim: Dimension | "total",
    boundaries: number[],
    at: number,
  ): Map<string, Metrics[]> {
    const totals = new Map<string, Metrics[]>();
    const add: AddTotals = (value, index, bytesIn, bytesOut, requests, errors) => {
      let series = totals.get(value);
      if (!series) {
        series = boundaries.map(zero);
        totals.set(value, series);
      }
      const target = series[index] as Metrics;
      target.bytesIn += bytesIn;
      target.bytesOut += bytesOut;
      target.requests += requests;
      target.errors += errors;
    };
    this.#foldedBefore(product, dim, boundaries, add);
    this.#pendingBefore(product, dim, boundaries, at, add);
    return totals;
  }

  /**
   * Folded: each series' cumulative row of the last hour before each boundary's hour. That is its newest row when
   * the boundary comes after it (always so for a range ending now), nothing when the boundary comes before its
   * first row, else a seek into cum. Rows come as one JSON array: a range query reads thousands, and crossing
   * into JavaScript value by value costs more than parsing them.
   */
  #foldedBefore(product: TrafficProduct, dim: Dimension | "total", boundaries: number[], add: AddTotals): void {
    const series = this.#jsonRows<[string, number, number, number, number, number, number]>(
      `SELECT json_group_array(json_array(value, first_hour, hour, bytes_in, bytes_out, requests, errors)) AS rows
       FROM cum_last WHERE product = ? AND dim = ?`,
      product,
      dim,
    );
    const hours = boundaries.map(hourOf);
    let seeks = false;
    for (const [value, first, newest, bytesIn, bytesOut, requests, errors] of series) {
      for (const [index, hour] of hours.entries()) {
        if (newest < hour) add(value, index, bytesIn, bytesOut, requests, errors);
        else if (first < hour) seeks = true;
      }
    }
    if (!seeks) return;
    const sought = this.#jsonRows<[string, number, number, number, number, number]>(
      // CROSS JOIN fixes the order (series, then boundaries, then one primary-key seek into cum): left to choose,
      // SQLite scans every cum row of the dimension instead.
      `SELECT json_group_array(json_array(s.value, b.key, c.bytes_in, c.bytes_out, c.requests, c.errors)) AS rows
       FROM cum_last s CROSS JOIN json_each(?) b CROSS JOIN cum c
       WHERE s.product = ? AND s.dim = ? AND s.first_hour < b.value AND s.hour >= b.value
         AND c.product = s.product AND c.dim = s.dim AND c.value = s.value
         AND c.hour = (SELECT c2.hour FROM cum c2 WHERE c2.product = s.product AND c2.dim = s.dim
                       AND c2.value = s.value AND c2.hour < b.value ORDER BY c2.hour DESC LIMIT 1)`,
      JSON.stringify(hours),
      product,
      dim,
    );
    for (const [value, index, bytesIn, bytesOut, requests, errors] of sought) {
      add(value, index, bytesIn, bytesOut, requests, errors);
    }
  }

  /** Not folded yet: pending deltas before each boundary's hour, and the partial hour of an unaligned boundary. */
  #pendingBefore(
    product: TrafficProduct,
    dim: Dimension | "total",
    boundaries: number[],
    at: number,
    add: AddTotals,
  ): void {
    const addMetrics = (value: string, index: number, m: Metrics) =>
      add(value, index, m.bytesIn, m.bytesOut, m.requests, m.errors);
    const column = DIMENSION_COLUMN[dim];
    const pending = this.#sql
      .exec<MetricsRow & { value: string; bucket: number }>(
        `SELECT ${column} AS value, bucket, ${SUMS} FROM pending WHERE product = ? GROUP BY value, bucket`,
        product,
      )
      .toArray();
    for (const [index, t] of boundaries.entries()) {
      for (const row of pending) if (row.bucket < hourOf(t)) addMetrics(row.value, index, metricsOf(row));
      if (t === hourOf(t)) continue;
      // The partial hour [hour(t), t): minutes within fact_1m's horizon, else 5-minute rows; and pending.
      const recent = hourOf(t) >= at - FACT_1M_KEPT_MS + MINUTE;
      const sources = [recent ? "fact_1m" : "fact_5m", "pending"];
      for (const table of sources) {
        const partial = this.#sql.exec<MetricsRow & { value: string }>(
          `SELECT ${column} AS value, ${SUMS} FROM ${table} WHERE ${productColumn(false)} = ? AND bucket >= ?
           AND bucket < ? GROUP BY value`,
          product,
          hourOf(t),
          t,
        );
        for (const row of partial) addMetrics(row.value, index, metricsOf(row));
      }
    }
  }

  /** The rows of a query selecting one `json_group_array(…) AS rows`. */
  #jsonRows<Row>(query: string, ...params: SqlStorageValue[]): Row[] {
    return JSON.parse(this.#sql.exec<{ rows: string }>(query, ...params).one().rows) as Row[];
  }

  /** Filtered: a scan of the resolution's tier and of what is still pending. */
  #scan(query: TrafficQuery): TrafficRow[] {
    const sources = [`fact_${query.resolution}`, "pending"];
    const where = [`${productColumn(query.filters.subuserId !== undefined)} = ?`, "bucket >= ?", "bucket < ?"];
    const params: Array<string | number> = [query.product, query.from, query.to];
    if (query.filters.subuserId !== undefined) {
      where.push("subuser = ?");
      params.push(query.filters.subuserId);
    }
    if (query.filters.region !== undefined) {
      where.push("region = ?");
      params.push(query.filters.region);
    }
    if (query.filters.tag !== undefined) {
      where.push("tag = ?");
      params.push(query.filters.tag);
    }
    const span = timeGroupSpan(query);
    const key = span !== null ? `bucket - bucket % ${span}` : (query.groupBy ?? "NULL");
    const union = sources.map((table) => `SELECT * FROM ${table} WHERE ${where.join(" AND ")}`).join(" UNION ALL ");
    return this.#sql
      .exec<MetricsRow & { k: string | number | null }>(
        `SELECT ${key} AS k, ${SUMS} FROM (${union}) GROUP BY k ORDER BY k`,
        ...sources.flatMap(() => params),
      )
      .toArray()
      .map((row) => ({ key: row.k, ...metricsOf(row) }));
  }
}

/** Adds metrics to a series' total before the boundary at `index`. */
type AddTotals = (
  value: string,
  index: number,
  bytesIn: number,
  bytesOut: number,
  requests: number,
  errors: number,
) => void;

const hourOf = (t: number) => t - (t % HOUR);

type MetricsRow = {
  bytes_in: number | null;
  bytes_out: number | null;
  requests: number | null;
  errors: number | null;
};

function metricsOf(row: MetricsRow): Metrics {
  return {
    bytesIn: row.bytes_in ?? 0,
    bytesOut: row.bytes_out ?? 0,
    requests: row.requests ?? 0,
    errors: row.errors ?? 0,
  };
}

function zero(): Metrics {
  return { bytesIn: 0, bytesOut: 0, requests: 0, errors: 0 };
}

function difference(after: Metrics | undefined, before: Metrics | undefined): Metrics {
  const a = after ?? zero();
  const b = before ?? zero();
  return {
    bytesIn: a.bytesIn - b.bytesIn,
    bytesOut: a.bytesOut - b.bytesOut,
    requests: a.requests - b.requests,
    errors: a.errors - b.errors,
  };
}

/**
 * The span of a `day` or `hour` group, never finer than the resolution that answers: beyond 90 days only days
 * exist, so `hour` groups there are days.
 */
function timeGroupSpan(query: TrafficQuery): number | null {
  if (query.groupBy !== "day" && query.groupBy !== "hour") return null;
  return Math.max(RESOLUTION_MS[query.groupBy === "day" ? "1d" : "1h"], RESOLUTION_MS[query.resolution]);
}

/** `from`, every start of a `span` inside the range, and `to`. */
export function timeBoundaries(from: number, to: number, span: number): number[] {
  const boundaries = [from];
  for (let t = from - (from % span) + span; t < to; t += span) boundaries.push(t);
  boundaries.push(to);
  return boundaries;
}

import { DAY, HOUR, MINUTE } from "../../platform/clock";
import {
  DOMAIN_ROWS,
  type IpHealth,
  OTHER_DOMAIN,
  type ReportScope,
  type TrafficDayCursor,
  type TrafficDayRow,
} from "./contract";
import { FACT_1M_KEPT_MS, productColumn, SUMS } from "./traffic-rollups";

/** The finest tier that still holds the whole range (the traffic API's resolution by age, spec §8.5). */
function tierFor(from: number, at: number): { table: string; span: number } {
  if (from >= at - FACT_1M_KEPT_MS + HOUR) return { table: "fact_1m", span: MINUTE };
  if (from >= at - 14 * DAY) return { table: "fact_5m", span: 5 * MINUTE };
  if (from >= at - 90 * DAY) return { table: "fact_1h", span: HOUR };
  return { table: "fact_1d", span: DAY };
}

/** The tables to read for `[from, to)` and the range aligned down to their resolution. */
function sourcesFor(from: number, to: number, at: number) {
  const tier = tierFor(from, at);
  const tables = [tier.table, "pending"];
  return { tables, from: from - (from % tier.span), to: to - (to % tier.span) };
}

/** ` AND column IN (…)` for a list filter (null: no filter), its parameter pushed to `params`. */
function inList(column: string, values: string[] | null, params: Array<string | number>): string {
  if (values === null) return "";
  params.push(JSON.stringify(values));
  return ` AND ${column} IN (SELECT value FROM json_each(?))`;
}

/** One SELECT per table over `[from, to)` with the scope's filters, joined by UNION ALL, and its parameters. */
function unionOf(tables: string[], columns: string, from: number, to: number, scope: ReportScope) {
  const params: Array<string | number> = [];
  // The domain tiers are keyed by product first: their reads use that key.
  const byProduct = scope.subuserIds !== null || scope.groupBy === "domain";
  const sql = tables
    .map((table) => {
      params.push(from, to);
      const filters =
        inList(productColumn(byProduct), scope.products, params) + inList("subuser", scope.subuserIds, params);
      return `SELECT ${columns} FROM ${table} WHERE bucket >= ? AND bucket < ?${filters}`;
    })
    .join(" UNION ALL ");
  return { sql, params };
}

/**
 * A day's domain rows bounded like the traffic API's answer: per product the `DOMAIN_ROWS` heaviest domains of the
 * day (bytes in + out, then requests), everything else as `(other)`; the sums are unchanged.
 */
function dayDomains(union: string): string {
  return `SELECT product, CASE WHEN k = '${OTHER_DOMAIN}' OR rank > ${DOMAIN_ROWS} THEN '${OTHER_DOMAIN}' ELSE k END AS k,
      bytes_in, bytes_out, requests, errors
    FROM (SELECT product, k, ${SUMS}, ROW_NUMBER() OVER (PARTITION BY product, k = '${OTHER_DOMAIN}'
        ORDER BY sum(bytes_in) + sum(bytes_out) DESC, sum(requests) DESC, k) AS rank
      FROM (${union}) GROUP BY product, k)`;
}

/**
 * Read-only queries for report files (src/domain/reports): paged, so a report of any size crosses the RPC boundary
 * a page at a time. They read the rollup tables of `traffic-rollups.ts` (never write them): the finest tier that
 * still covers the range's start, plus what is still `pending` (a delta is always in exactly one of `pending` or
 * the folded tiers).
 */
export class TrafficReports {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /**
   * Usage per UTC day, product and sub-user (or target domain), in key order, up to `limit` rows after `cursor`. Each call reads one
   * day at a time (skipping empty days), so a page costs a scan of a day, not of the whole range.
   */
  trafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number, at: number): TrafficDayRow[] {
    const perDomain = scope.groupBy === "domain";
    const column = perDomain ? "domain" : "subuser";
    const sources = sourcesFor(scope.from, scope.to, at);
    // Per domain: the domain tier of the same resolution (written at ingest: nothing pending).
    const range = perDomain
      ? { ...sources, tables: [(sources.tables[0] as string).replace("fact_", "domain_")] }
      : sources;
    const rows: TrafficDayRow[] = [];
    let after = cursor;
    for (
      let day = cursor ? cursor.day : range.from - (range.from % DAY);
      day < range.to && rows.length < limit;
      day += DAY
    ) {
      const union = unionOf(
        range.tables,
        `product, ${column} AS k, bytes_in, bytes_out, requests, errors`,
        Math.max(day, range.from),
        Math.min(day + DAY, range.to),
        scope,
      );
      const params = [
        ...union.params,
        ...(after ? [after.product, (perDomain ? after.domain : after.subuserId) ?? ""] : []),
        limit - rows.length,
      ];
      const page = this.#sql.exec<{
        product: string;
        k: string;
        bytes_in: number;
        bytes_out: number;
        requests: number;
        errors: number;
      }>(
        `SELECT product, k, ${SUMS} FROM (${perDomain ? dayDomains(union.sql) : union.sql}) GROUP BY product, k
         ${after ? "HAVING (product, k) > (?, ?)" : ""} ORDER BY product, k LIMIT ?`,
        ...params,
      );
      after = null;
      for (const row of page) {
        rows.push({
          day,
          product: row.product,
          ...(perDomain ? { subuserId: "", domain: row.k } : { subuserId: row.k }),
          bytesIn: row.bytes_in,
          bytesOut: row.bytes_out,
          requests: row.requests,
          errors: row.errors,
        });
      }
    }
    return rows;
  }

  /** Per ISP IP: requests and errors in `[from, to)`, and the start of the latest bucket with any traffic. */
  ipHealth(ips: string[], from: number, to: number, at: number): IpHealth[] {
    if (ips.length === 0) return [];
    const range = sourcesFor(from, to, at);
    const list = JSON.stringify(ips);
    const union = unionOf(range.tables, "ip, requests, errors", range.from, range.to, {
      from,
      to,
      products: ["isp"],
      subuserIds: null,
    });
    const totals = this.#sql
      .exec<{ ip: string; requests: number; errors: number }>(
        `SELECT ip, sum(requests) AS requests, sum(errors) AS errors FROM (${union.sql})
         WHERE ip IN (SELECT value FROM json_each(?)) GROUP BY ip`,
        ...union.params,
        list,
      )
      .toArray();
    const everyTier = ["fact_1m", "fact_5m", "fact_1h", "fact_1d", "pending"]
      .map((table) => `SELECT ip, bucket FROM ${table} WHERE product = 'isp'`)
      .join(" UNION ALL ");
    const lastSeen = this.#sql
      .exec<{ ip: string; last: number }>(
        `SELECT ip, max(bucket) AS last FROM (${everyTier}) WHERE ip IN (SELECT value FROM json_each(?)) GROUP BY ip`,
        list,
      )
      .toArray();
    const totalsByIp = new Map(totals.map((row) => [row.ip, row]));
    const lastByIp = new Map(lastSeen.map((row) => [row.ip, row.last]));
    return ips.map((ip) => ({
      ip,
      requests: totalsByIp.get(ip)?.requests ?? 0,
      errors: totalsByIp.get(ip)?.errors ?? 0,
      lastSeenAt: lastByIp.get(ip) ?? null,
    }));
  }
}

import { DAY, HOUR, MINUTE } from "../../platform/clock";
import {
  CELL,
  DOMAIN_ROWS,
  type IpHealth,
  OTHER_DOMAIN,
  type ReportScope,
  type TrafficDayCursor,
  type TrafficDayRow,
} from "./contract";
import { floorTo, TIERS } from "./folded-tiers";
import {
  addDomainSums,
  addSums,
  DOMAIN_SUMS,
  type DomainSums,
  heavierDomain,
  MARGINAL,
  metricsOf,
  SUMS,
  type Sums,
  zeroSums,
} from "./summary";
import type { TrafficQueries } from "./traffic-queries";

/** The finest resolution that still holds all of a range starting at `from` (the traffic API's, spec §8.5). */
function spanFor(from: number, at: number): number {
  if (from >= at - 24 * HOUR) return MINUTE;
  if (from >= at - 14 * DAY) return TIERS["5m"].span;
  if (from >= at - 90 * DAY) return HOUR;
  return DAY;
}

type DayRow = { product: string; key: string; sums: Sums };

/**
 * Read-only queries for report files (src/domain/reports): paged, so a report of any size crosses the RPC boundary
 * a page at a time, and a page costs one day of the account's rows (the last day read is kept for the next page).
 */
export class TrafficReports {
  readonly #queries: TrafficQueries;
  #day: { key: string; rows: DayRow[] } | null = null;

  constructor(queries: TrafficQueries) {
    this.#queries = queries;
  }

  /** Usage per UTC day, product and sub-user (or target domain), in key order, up to `limit` rows after `cursor`. */
  trafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number, at: number): TrafficDayRow[] {
    const perDomain = scope.groupBy === "domain";
    const span = spanFor(scope.from, at);
    const from = floorTo(scope.from, span);
    const to = floorTo(scope.to, span);
    const rows: TrafficDayRow[] = [];
    let after = cursor;
    for (let day = cursor ? cursor.day : floorTo(from, DAY); day < to && rows.length < limit; day += DAY) {
      const dayRows = this.#dayRows(scope, Math.max(day, from), Math.min(day + DAY, to), perDomain);
      const afterKey = after ? ((perDomain ? after.domain : after.subuserId) ?? "") : null;
      for (const row of dayRows) {
        if (rows.length >= limit) break;
        if (
          after &&
          (row.product < after.product || (row.product === after.product && row.key <= (afterKey as string)))
        ) {
          continue;
        }
        rows.push({
          day,
          product: row.product,
          ...(perDomain ? { subuserId: "", domain: row.key } : { subuserId: row.key }),
          ...metricsOf(row.sums),
        });
      }
      after = null;
    }
    return rows;
  }

  /** Per ISP IP: requests and errors in `[from, to)`, and the start of the latest minute with any traffic. */
  ipHealth(ips: string[], from: number, to: number, at: number, version: number): IpHealth[] {
    if (ips.length === 0) return [];
    const span = spanFor(from, at);
    const wanted = new Set(ips);
    const totals = new Map<string, Sums>();
    this.#queries.eachCell(this.#queries.pieces(floorTo(from, span), floorTo(to, span)), (cell) => {
      const ip = cell[CELL.ip];
      if (cell[CELL.product] !== "isp" || !wanted.has(ip)) return;
      const sums = totals.get(ip) ?? zeroSums();
      addSums(sums, cell, CELL.bytesIn);
      totals.set(ip, sums);
    });
    const ever = this.#queries.cumulativeBefore("isp", "ip", Number.POSITIVE_INFINITY, version);
    return ips.map((ip) => ({
      ip,
      requests: totals.get(ip)?.[SUMS.requests] ?? 0,
      errors: totals.get(ip)?.[SUMS.errors] ?? 0,
      lastSeenAt: ever.has(ip) ? (ever.get(ip)?.[MARGINAL.latestMinute] ?? null) : null,
    }));
  }

  /** One day's rows in (product, key) order; per domain bounded like the API's answer, per product. */
  #dayRows(scope: ReportScope, from: number, to: number, perDomain: boolean): DayRow[] {
    const key = JSON.stringify([from, to, perDomain, scope.products, scope.subuserIds]);
    if (this.#day?.key === key) return this.#day.rows;
    const products = scope.products === null ? null : new Set(scope.products);
    const subusers = scope.subuserIds === null ? null : new Set(scope.subuserIds);
    const pieces = this.#queries.pieces(from, to);
    let rows: DayRow[];
    if (perDomain) {
      const byProduct = new Map<string, Map<string, DomainSums>>();
      this.#queries.eachDomain(pieces, (row) => {
        const product = row[DOMAIN_SUMS.product];
        if (products !== null && !products.has(product)) return;
        const own = byProduct.get(product) ?? new Map<string, DomainSums>();
        byProduct.set(product, own);
        addDomainSums(own, row, 0);
      });
      rows = [...byProduct].flatMap(([product, own]) => boundedDay(product, own));
    } else {
      const sums = new Map<string, DayRow>();
      this.#queries.eachCell(pieces, (cell) => {
        const product = cell[CELL.product];
        const subuserId = cell[CELL.subuserId];
        if ((products !== null && !products.has(product)) || (subusers !== null && !subusers.has(subuserId))) return;
        const k = `${product}\u0001${subuserId}`;
        const row = sums.get(k) ?? { product, key: subuserId, sums: zeroSums() };
        addSums(row.sums, cell, CELL.bytesIn);
        sums.set(k, row);
      });
      rows = [...sums.values()];
    }
    rows.sort((a, b) =>
      a.product < b.product ? -1 : a.product > b.product ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
    );
    this.#day = { key, rows };
    return rows;
  }
}

/** A day's domains of one product: the `DOMAIN_ROWS` heaviest, the rest (and every `(other)`) as `(other)`. */
function boundedDay(product: string, own: Map<string, DomainSums>): DayRow[] {
  const named = [...own.values()].filter((row) => row[DOMAIN_SUMS.domain] !== OTHER_DOMAIN).sort(heavierDomain);
  const other = zeroSums();
  for (const row of [
    ...named.slice(DOMAIN_ROWS),
    ...(own.has(OTHER_DOMAIN) ? [own.get(OTHER_DOMAIN) as DomainSums] : []),
  ]) {
    addSums(other, row, DOMAIN_SUMS.bytesIn);
  }
  const rows = named
    .slice(0, DOMAIN_ROWS)
    .map((row) => ({ product, key: row[DOMAIN_SUMS.domain], sums: row.slice(DOMAIN_SUMS.bytesIn) as Sums }));
  if (other[SUMS.requests] > 0 || other[SUMS.bytesIn] > 0 || other[SUMS.bytesOut] > 0) {
    rows.push({ product, key: OTHER_DOMAIN, sums: other });
  }
  return rows;
}

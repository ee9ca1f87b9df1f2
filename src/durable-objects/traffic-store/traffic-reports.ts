import { DAY, HOUR, MINUTE } from "../../platform/clock";
import {
  DOMAIN_ROWS,
  type IpHealth,
  OTHER_DOMAIN,
  type ReportScope,
  type TrafficDayCursor,
  type TrafficDayRow,
} from "./contract";
import { floorTo, TIERS } from "./folded-tiers";
import { addSums, type DomainSums, heavierDomain, metricsOf, type Sums, zeroSums } from "./summary";
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
      if (cell[1] !== "isp" || !wanted.has(cell[7])) return;
      const sums = totals.get(cell[7]) ?? zeroSums();
      addSums(sums, cell, 8);
      totals.set(cell[7], sums);
    });
    const ever = this.#queries.cumulativeBefore("isp", "ip", Number.POSITIVE_INFINITY, version);
    return ips.map((ip) => ({
      ip,
      requests: totals.get(ip)?.[2] ?? 0,
      errors: totals.get(ip)?.[3] ?? 0,
      lastSeenAt: ever.has(ip) ? (ever.get(ip)?.[4] ?? null) : null,
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
        if (products !== null && !products.has(row[1])) return;
        const own = byProduct.get(row[1]) ?? new Map<string, DomainSums>();
        byProduct.set(row[1], own);
        const known = own.get(row[2]);
        if (known) addSums(known, row, 3, 3);
        else own.set(row[2], [0, row[1], row[2], row[3], row[4], row[5], row[6]]);
      });
      rows = [...byProduct].flatMap(([product, own]) => boundedDay(product, own));
    } else {
      const sums = new Map<string, DayRow>();
      this.#queries.eachCell(pieces, (cell) => {
        if ((products !== null && !products.has(cell[1])) || (subusers !== null && !subusers.has(cell[2]))) return;
        const k = `${cell[1]}\u0001${cell[2]}`;
        const row = sums.get(k) ?? { product: cell[1], key: cell[2], sums: zeroSums() };
        addSums(row.sums, cell, 8);
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
  const named = [...own.values()].filter((row) => row[2] !== OTHER_DOMAIN).sort(heavierDomain);
  const other = zeroSums();
  for (const row of [
    ...named.slice(DOMAIN_ROWS),
    ...(own.has(OTHER_DOMAIN) ? [own.get(OTHER_DOMAIN) as DomainSums] : []),
  ]) {
    addSums(other, row, 3);
  }
  const rows = named.slice(0, DOMAIN_ROWS).map((row) => ({ product, key: row[2], sums: row.slice(3) as Sums }));
  if (other[2] > 0 || other[0] > 0 || other[1] > 0) rows.push({ product, key: OTHER_DOMAIN, sums: other });
  return rows;
}

import { DAY, HOUR, MINUTE } from "../../platform/clock";
import type { ArrivalRows } from "./arrival-rows";
import {
  CELL,
  type CellRow,
  cellStatus,
  type Dimension,
  DOMAIN_ROWS,
  OTHER_DOMAIN,
  RESOLUTION_MS,
  type TrafficProduct,
  type TrafficQuery,
  type TrafficRow,
} from "./contract";
import { type FoldedTiers, TIERS, type TierName } from "./folded-tiers";
import {
  addCellsToMarginals,
  addDomainSums,
  addSums,
  type CumulativeDimension,
  cellSums,
  DOMAIN_SUMS,
  type DomainSums,
  dimensionValue,
  hasUsage,
  heavierDomain,
  MARGINAL,
  type Marginal,
  type Marginals,
  marginalOf,
  metricsOf,
  type Sums,
  zeroSums,
} from "./summary";

/**
 * A piece of a range: a folded bucket (its row, when it has one), or minutes read from the arrival rows (the
 * 1-minute edges of a range, and everything not folded yet).
 */
export type Piece = { tier: TierName; bucket: number } | { minutes: [from: number, to: number] };

const COARSEST_FIRST: TierName[] = ["1d", "1h", "5m"];
/** Below this many pieces a grouped total reads the pieces themselves; above, two points of the cumulative series. */
const PIECES_BEFORE_CUMULATIVE = 24;

/**
 * Traffic queries over an account's rows, exact at every resolution. A range is covered by the coarsest folded
 * buckets that fit in it (days, hours, 5 minutes) and the arrival rows' minutes at its edges and after the
 * watermark. Totals (alone or per hour or day) read only the rows' heads; filtered and grouped queries read the
 * pieces' cells; a grouped total over a long range is the difference of the cumulative series at its ends.
 */
export class TrafficQueries {
  readonly #arrivals: ArrivalRows;
  readonly #tiers: FoldedTiers;
  readonly #carriers: () => Map<number, string>;
  /** The series after the newest hour or day row (everything later), per base and data version. */
  #tail: { version: number; base: number; marginals: Marginals } | null = null;

  constructor(arrivals: ArrivalRows, tiers: FoldedTiers, carriers: () => Map<number, string>) {
    this.#arrivals = arrivals;
    this.#tiers = tiers;
    this.#carriers = carriers;
  }

  /** Totals over `[from, to)` per group (the range aligned to its resolution by the caller). */
  traffic(query: TrafficQuery, version: number): TrafficRow[] {
    if (query.groupBy === "domain") return this.#domains(query);
    const filtered = Object.values(query.filters).some((value) => value !== undefined);
    const span = timeGroupSpan(query);
    let rows: TrafficRow[];
    if (!filtered && (query.groupBy === null || span !== null)) rows = this.#totals(query, span);
    else if (!filtered && this.pieces(query.from, query.to).length > PIECES_BEFORE_CUMULATIVE) {
      rows = this.#cumulativeDifference(query, query.groupBy as CumulativeDimension, version);
    } else rows = this.#scan(query, span);
    if (query.groupBy === null) return [rows[0] ?? { key: null, ...metricsOf(zeroSums()) }];
    const nonEmpty = rows.filter(hasUsage).sort(byKey);
    if (query.groupBy === "asn" && query.product === "mobile") {
      const carriers = this.#carriers();
      for (const row of nonEmpty) row.carrierName = carriers.get(Number(row.key)) ?? null;
    }
    return nonEmpty;
  }

  /**
   * The pieces covering `[from, to)`, none coarser than `maxSpan`: whole folded buckets, coarsest first, and the
   * minutes left over (merged into runs). Everything from the 5-minute watermark on is one run of minutes.
   */
  pieces(from: number, to: number, maxSpan = Number.POSITIVE_INFINITY): Piece[] {
    const pieces: Piece[] = [];
    const addMinutes = (a: number, b: number) => {
      const last = pieces[pieces.length - 1];
      if (last && "minutes" in last && last.minutes[1] === a) last.minutes[1] = b;
      else pieces.push({ minutes: [a, b] });
    };
    let t = from;
    while (t < to) {
      if (t >= this.#tiers.watermark("5m")) {
        addMinutes(t, to);
        break;
      }
      const tier = COARSEST_FIRST.find((name) => {
        const { span } = TIERS[name];
        return span <= maxSpan && t % span === 0 && t + span <= to && t + span <= this.#tiers.watermark(name);
      });
      if (tier === undefined) {
        addMinutes(t, t + MINUTE);
        t += MINUTE;
        continue;
      }
      if (this.#tiers.head(tier, t)) pieces.push({ tier, bucket: t });
      t += TIERS[tier].span;
    }
    return pieces;
  }

  /** Every cell of the pieces, with the start of the bucket (or the minute) it counts in. */
  eachCell(pieces: Piece[], visit: (cell: CellRow, at: number) => void): void {
    for (const piece of pieces) {
      if ("tier" in piece) {
        for (const cell of this.#tiers.content(piece.tier, piece.bucket).cells) visit(cell, piece.bucket);
        continue;
      }
      const [from, to] = piece.minutes;
      for (const head of this.#arrivals.overlapping(from, to)) {
        for (const cell of this.#arrivals.read(head.slot).content.cells) {
          const minute = cell[CELL.minute];
          if (minute >= from && minute < to) visit(cell, minute);
        }
      }
    }
  }

  /** Every domain row of the pieces. */
  eachDomain(pieces: Piece[], visit: (row: DomainSums) => void): void {
    for (const piece of pieces) {
      if ("tier" in piece) {
        for (const row of this.#tiers.content(piece.tier, piece.bucket).domains) visit(row);
        continue;
      }
      const [from, to] = piece.minutes;
      for (const head of this.#arrivals.overlapping(from, to)) {
        for (const row of this.#arrivals.read(head.slot).content.domains) {
          if (row[DOMAIN_SUMS.minute] >= from && row[DOMAIN_SUMS.minute] < to) visit(row);
        }
      }
    }
  }

  /** Per-product totals of the pieces, from the rows' heads alone. */
  eachTotal(pieces: Piece[], visit: (product: TrafficProduct, sums: Sums, at: number) => void): void {
    for (const piece of pieces) {
      if ("tier" in piece) {
        const head = this.#tiers.head(piece.tier, piece.bucket);
        for (const [minute, product, ...sums] of head?.totals ?? [])
          visit(product, sums, piece.tier === "5m" ? minute : piece.bucket);
        continue;
      }
      const [from, to] = piece.minutes;
      for (const head of this.#arrivals.overlapping(from, to)) {
        for (const [minute, product, ...sums] of head.totals)
          if (minute >= from && minute < to) visit(product, sums, minute);
      }
    }
  }

  /**
   * Per value of a dimension, everything of a product before `t`: the cumulative series of the latest hour or day
   * row ending by `t`, plus the pieces after it.
   */
  cumulativeBefore(
    product: TrafficProduct,
    dimension: CumulativeDimension,
    t: number,
    version: number,
  ): Map<string, Marginal> {
    const base = this.#tiers.cumulativeBase(t);
    const values = new Map<string, Marginal>();
    const add = (value: string, sums: Sums | Marginal, latestMinute: number) => {
      const known = values.get(value);
      if (known) {
        addSums(known, sums);
        known[MARGINAL.latestMinute] = Math.max(known[MARGINAL.latestMinute], latestMinute);
      } else values.set(value, marginalOf(sums, latestMinute));
    };
    const baseMarginals = base ? this.#tiers.cumulative(base.tier, base.bucket) : {};
    for (const [value, marginal] of Object.entries(baseMarginals[product]?.[dimension] ?? {}))
      add(value, marginal, marginal[MARGINAL.latestMinute]);
    const from = base?.end ?? this.#earliest();
    const after = t > this.#latestMinute() ? this.#tailAfter(from, version) : null;
    if (after) {
      for (const [value, marginal] of Object.entries(after[product]?.[dimension] ?? {}))
        add(value, marginal, marginal[MARGINAL.latestMinute]);
      return values;
    }
    this.eachCell(this.pieces(from, t), (cell) => {
      if (cell[CELL.product] !== product) return;
      const value = dimensionValue(cell, dimension);
      if (value !== null) add(value, cellSums(cell), cell[CELL.minute]);
    });
    return values;
  }

  /** Unfiltered totals: alone, or per hour or day (heads only). */
  #totals(query: TrafficQuery, span: number | null): TrafficRow[] {
    const groups = new Map<number | null, Sums>();
    this.eachTotal(this.pieces(query.from, query.to, span ?? Number.POSITIVE_INFINITY), (product, sums, at) => {
      if (product !== query.product) return;
      const key = span === null ? null : at - (at % span);
      const group = groups.get(key) ?? zeroSums();
      addSums(group, sums);
      groups.set(key, group);
    });
    return [...groups].map(([key, sums]) => ({ key, ...metricsOf(sums) }));
  }

  /** Filtered, or short: the pieces' cells, filtered and grouped. */
  #scan(query: TrafficQuery, span: number | null): TrafficRow[] {
    const { region, tag } = query.filters;
    const subusers = query.filters.subuserIds && new Set(query.filters.subuserIds);
    const groups = new Map<string | number | null, Sums>();
    this.eachCell(this.pieces(query.from, query.to, span ?? Number.POSITIVE_INFINITY), (cell, at) => {
      if (cell[CELL.product] !== query.product) return;
      if (subusers && !subusers.has(cell[CELL.subuserId])) return;
      if (region !== undefined && cell[CELL.region] !== region) return;
      if (tag !== undefined && cell[CELL.tag] !== tag) return;
      const key =
        span !== null ? at - (at % span) : query.groupBy === null ? null : groupKey(cell, query.groupBy as Dimension);
      if (key === undefined) return;
      const group = groups.get(key) ?? zeroSums();
      addSums(group, cell, CELL.bytesIn);
      groups.set(key, group);
    });
    return [...groups].map(([key, sums]) => ({ key, ...metricsOf(sums) }));
  }

  /** Unfiltered, grouped by a dimension, over a long range: F(to) − F(from) per value. */
  #cumulativeDifference(query: TrafficQuery, dimension: CumulativeDimension, version: number): TrafficRow[] {
    const after = this.cumulativeBefore(query.product, dimension, query.to, version);
    const before = this.cumulativeBefore(query.product, dimension, query.from, version);
    const rows: TrafficRow[] = [];
    const { bytesIn, bytesOut, requests, errors } = MARGINAL;
    for (const [value, sums] of after) {
      const earlier = before.get(value);
      const difference: Sums = earlier
        ? [
            sums[bytesIn] - earlier[bytesIn],
            sums[bytesOut] - earlier[bytesOut],
            sums[requests] - earlier[requests],
            sums[errors] - earlier[errors],
          ]
        : [sums[bytesIn], sums[bytesOut], sums[requests], sums[errors]];
      rows.push({
        key: dimension === "asn" || dimension === "status" ? Number(value) : value,
        ...metricsOf(difference),
      });
    }
    if (dimension === "status") rows.push(this.#unknownStatus(query, rows));
    return rows;
  }

  /** Usage of unknown status (from before statuses were kept): the range's total less that of every status. */
  #unknownStatus(query: TrafficQuery, statuses: TrafficRow[]): TrafficRow {
    const rest = this.#totals(query, null)[0] ?? { key: null, ...metricsOf(zeroSums()) };
    for (const row of statuses) {
      rest.bytesIn -= row.bytesIn;
      rest.bytesOut -= row.bytesOut;
      rest.requests -= row.requests;
      rest.errors -= row.errors;
    }
    return { ...rest, key: null };
  }

  /**
   * Per domain over `[from, to)`: the heaviest `DOMAIN_ROWS` domains (bytes in + out, then requests), heaviest
   * first, then `(other)` with everything else.
   */
  #domains(query: TrafficQuery): TrafficRow[] {
    const sums = new Map<string, DomainSums>();
    this.eachDomain(this.pieces(query.from, query.to), (row) => {
      if (row[DOMAIN_SUMS.product] === query.product) addDomainSums(sums, row, 0);
    });
    const named = [...sums.values()].filter((row) => row[DOMAIN_SUMS.domain] !== OTHER_DOMAIN).sort(heavierDomain);
    const other = zeroSums();
    for (const row of [
      ...named.slice(DOMAIN_ROWS),
      ...(sums.has(OTHER_DOMAIN) ? [sums.get(OTHER_DOMAIN) as DomainSums] : []),
    ]) {
      addSums(other, row, DOMAIN_SUMS.bytesIn);
    }
    const rows: TrafficRow[] = named
      .slice(0, DOMAIN_ROWS)
      .map((row) => ({ key: row[DOMAIN_SUMS.domain], ...metricsOf(row, DOMAIN_SUMS.bytesIn) }));
    const otherRow = { key: OTHER_DOMAIN, ...metricsOf(other) };
    if (hasUsage(otherRow)) rows.push(otherRow);
    return rows.filter(hasUsage);
  }

  /** Everything from `from` on, per product, dimension and value (cached until the data changes). */
  #tailAfter(from: number, version: number): Marginals {
    if (this.#tail?.version === version && this.#tail.base === from) return this.#tail.marginals;
    const marginals: Marginals = {};
    const cells: CellRow[] = [];
    this.eachCell(this.pieces(from, this.#latestMinute() + MINUTE), (cell) => cells.push(cell));
    addCellsToMarginals(marginals, cells);
    this.#tail = { version, base: from, marginals };
    return marginals;
  }

  /** The latest record minute in any arrival row (everything later is empty). */
  #latestMinute(): number {
    let latest = this.#tiers.watermark("5m") - MINUTE;
    for (const head of this.#arrivals.heads()) latest = Math.max(latest, head.lastMinute);
    return latest;
  }

  /** Where the oldest row of any tier starts. */
  #earliest(): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const tier of COARSEST_FIRST) earliest = Math.min(earliest, this.#tiers.buckets(tier)[0] ?? earliest);
    for (const head of this.#arrivals.heads()) earliest = Math.min(earliest, head.firstMinute);
    return Number.isFinite(earliest) ? earliest - (earliest % DAY) : 0;
  }
}

/**
 * A cell's key in a dimension, as the API shows it (ASNs and statuses as numbers, an unknown status null); undefined
 * when the cell is not in the grouping (grouped by error code, a cell that did not fail).
 */
function groupKey(cell: CellRow, dimension: Dimension): string | number | null | undefined {
  if (dimension === "asn") return cell[CELL.asn];
  if (dimension === "status") return cellStatus(cell);
  return dimensionValue(cell, dimension) ?? undefined;
}

/** Numbers numerically, text by code unit: the order every grouped answer comes in. */
function byKey(a: TrafficRow, b: TrafficRow): number {
  const x = a.key ?? "";
  const y = b.key ?? "";
  if (typeof x === "number" && typeof y === "number") return x - y;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * The span of a `day` or `hour` group, never finer than the resolution that answers: beyond 90 days only days
 * exist, so `hour` groups there are days.
 */
export function timeGroupSpan(query: Pick<TrafficQuery, "groupBy" | "resolution">): number | null {
  if (query.groupBy !== "day" && query.groupBy !== "hour") return null;
  return Math.max(query.groupBy === "day" ? DAY : HOUR, RESOLUTION_MS[query.resolution]);
}

import {
  type CellRow,
  DOMAINS_PER_BUCKET,
  type Metrics,
  OTHER_DOMAIN,
  type SourceRow,
  type TrafficProduct,
} from "./contract";

/**
 * The pure arithmetic of the store's rows (no storage here): usage summed per key, domains bounded per bucket,
 * the per-dimension marginals the cumulative series are made of, and per-minute totals. Every function adds exactly:
 * a byte or request lands in exactly one output row, so merged summaries always sum to their inputs.
 */

/** bytes in, bytes out, requests, errors. */
export type Sums = [bytesIn: number, bytesOut: number, requests: number, errors: number];

/** A domain's usage in a bucket: [minute or bucket, product, domain, …sums]. */
export type DomainSums = [minute: number, product: TrafficProduct, domain: string, ...sums: Sums];

/** A product's usage in one minute: [minute, product, …sums]. */
export type MinuteTotal = [minute: number, product: TrafficProduct, ...sums: Sums];

/** Per product, dimension and value: [bytes in, bytes out, requests, errors, latest minute seen]. */
export type Marginals = Partial<Record<TrafficProduct, Partial<Record<CumulativeDimension, Record<string, number[]>>>>>;

/** The dimensions the cumulative series keep (every `group_by` that is not time or domain). */
export const CUMULATIVE_DIMENSIONS = ["subuser", "region", "asn", "tag", "ip"] as const;
export type CumulativeDimension = (typeof CUMULATIVE_DIMENSIONS)[number];

export function zeroSums(): Sums {
  return [0, 0, 0, 0];
}

/**
 * Adds the four sums found at `offset` of `from` (a row whose sums follow its keys) to those at `into` of `target`
 * (a row of the same shape, or bare sums), in place.
 */
export function addSums(target: ArrayLike<unknown>, from: ArrayLike<unknown>, offset = 0, into = 0): void {
  const sums = target as unknown as number[];
  sums[into] = (sums[into] as number) + (from[offset] as number);
  sums[into + 1] = (sums[into + 1] as number) + (from[offset + 1] as number);
  sums[into + 2] = (sums[into + 2] as number) + (from[offset + 2] as number);
  sums[into + 3] = (sums[into + 3] as number) + (from[offset + 3] as number);
}

export function metricsOf(sums: ArrayLike<unknown>, offset = 0): Metrics {
  return {
    bytesIn: sums[offset] as number,
    bytesOut: sums[offset + 1] as number,
    requests: sums[offset + 2] as number,
    errors: sums[offset + 3] as number,
  };
}

export function hasUsage(m: Metrics): boolean {
  return m.requests > 0 || m.bytesIn > 0 || m.bytesOut > 0;
}

/** The value of a cell in a dimension (ASNs as text, as the cumulative series key them). */
export function dimensionValue(cell: CellRow, dimension: CumulativeDimension): string {
  switch (dimension) {
    case "subuser":
      return cell[2];
    case "region":
      return cell[3];
    case "asn":
      return String(cell[4]);
    case "tag":
      return cell[5];
    case "ip":
      return cell[7];
  }
}

/** Cells summed by their key (minute and the seven dimensions). `minuteOf` moves them to a coarser bucket. */
export function sumCells(rows: Iterable<CellRow>, minuteOf: (minute: number) => number = (m) => m): CellRow[] {
  const sums = new Map<string, CellRow>();
  for (const row of rows) {
    const minute = minuteOf(row[0]);
    const key = `${minute}\u0001${row[1]}\u0001${row[2]}\u0001${row[3]}\u0001${row[4]}\u0001${row[5]}\u0001${row[6]}\u0001${row[7]}`;
    const known = sums.get(key);
    if (known) addSums(known, row, 8, 8);
    else
      sums.set(key, [minute, row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10], row[11]]);
  }
  return [...sums.values()];
}

/**
 * Domain usage summed per bucket (`minuteOf`), product and domain, each bucket and product bounded to the
 * `DOMAINS_PER_BUCKET` heaviest domains (bytes in + out, then requests, then name); the rest, and every `(other)`
 * already there, is one `(other)` row. A domain once put in `(other)` keeps those bytes there: the bound loses
 * names, never usage.
 */
export function boundDomains(
  rows: Iterable<DomainSums>,
  minuteOf: (minute: number) => number = (m) => m,
): DomainSums[] {
  const groups = new Map<string, Map<string, DomainSums>>();
  for (const row of rows) {
    const minute = minuteOf(row[0]);
    const groupKey = `${minute}\u0001${row[1]}`;
    let group = groups.get(groupKey);
    if (!group) {
      group = new Map();
      groups.set(groupKey, group);
    }
    const known = group.get(row[2]);
    if (known) addSums(known, row, 3, 3);
    else group.set(row[2], [minute, row[1], row[2], row[3], row[4], row[5], row[6]]);
  }
  const out: DomainSums[] = [];
  for (const group of groups.values()) {
    const named = [...group.values()].filter((row) => row[2] !== OTHER_DOMAIN).sort(heavierDomain);
    const kept = named.slice(0, DOMAINS_PER_BUCKET);
    const rest = [...named.slice(DOMAINS_PER_BUCKET), ...(group.has(OTHER_DOMAIN) ? [group.get(OTHER_DOMAIN)] : [])];
    out.push(...kept);
    if (rest.length > 0) {
      const first = rest[0] as DomainSums;
      const other: DomainSums = [first[0], first[1], OTHER_DOMAIN, 0, 0, 0, 0];
      for (const row of rest) addSums(other, row as DomainSums, 3, 3);
      out.push(other);
    }
  }
  return out;
}

/** Bytes in + out, then requests, descending; then the domain: a total order (the same input, the same rows). */
export function heavierDomain(a: DomainSums, b: DomainSums): number {
  const bytes = b[3] + b[4] - (a[3] + a[4]);
  if (bytes !== 0) return bytes;
  if (b[5] !== a[5]) return b[5] - a[5];
  return a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0;
}

/** Per-minute, per-product totals of cells (the heads that time-grouped totals are read from). */
export function minuteTotals(rows: Iterable<CellRow>, minuteOf: (minute: number) => number = (m) => m): MinuteTotal[] {
  const totals = new Map<string, MinuteTotal>();
  for (const row of rows) {
    const minute = minuteOf(row[0]);
    const key = `${minute}\u0001${row[1]}`;
    const known = totals.get(key);
    if (known) addSums(known, row, 8, 2);
    else totals.set(key, [minute, row[1], row[8], row[9], row[10], row[11]]);
  }
  return [...totals.values()];
}

/** Adds totals into `target` (merged per minute and product). */
export function mergeTotals(target: MinuteTotal[], more: Iterable<MinuteTotal>): MinuteTotal[] {
  const byKey = new Map(target.map((row) => [`${row[0]}\u0001${row[1]}`, row]));
  for (const row of more) {
    const key = `${row[0]}\u0001${row[1]}`;
    const known = byKey.get(key);
    if (known) addSums(known, row, 2, 2);
    else {
      const copy: MinuteTotal = [row[0], row[1], row[2], row[3], row[4], row[5]];
      byKey.set(key, copy);
      target.push(copy);
    }
  }
  return target;
}

/** Adds cells to marginals (in place): each cell counts once in every dimension. */
export function addCellsToMarginals(marginals: Marginals, rows: Iterable<CellRow>): Marginals {
  for (const row of rows) {
    let product = marginals[row[1]];
    if (!product) {
      product = {};
      marginals[row[1]] = product;
    }
    for (const dimension of CUMULATIVE_DIMENSIONS) {
      let values = product[dimension];
      if (!values) {
        values = {};
        product[dimension] = values;
      }
      const value = dimensionValue(row, dimension);
      const known = values[value];
      if (known) {
        addSums(known, row, 8);
        if (row[0] > (known[4] as number)) known[4] = row[0];
      } else values[value] = [row[8], row[9], row[10], row[11], row[0]];
    }
  }
  return marginals;
}

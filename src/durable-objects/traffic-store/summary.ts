import {
  CELL,
  type CellRow,
  cellErrorCode,
  cellStatus,
  DOMAINS_PER_BUCKET,
  type Metrics,
  OTHER_DOMAIN,
  type TrafficProduct,
} from "./contract";

/**
 * The pure arithmetic of the store's rows (no storage here): usage summed per key, domains bounded per bucket,
 * the per-dimension marginals the cumulative series are made of, and per-minute totals. Every function adds exactly:
 * a byte or request lands in exactly one output row, so merged summaries always sum to their inputs.
 */

/** bytes in, bytes out, requests, errors. */
export type Sums = [bytesIn: number, bytesOut: number, requests: number, errors: number];

/**
 * Where each of the sums stands: in `Sums`, and after the keys of every row that carries them (a row's own index
 * names where its sums start, its `bytesIn`).
 */
export const SUMS = {
  bytesIn: 0,
  bytesOut: 1,
  requests: 2,
  errors: 3,
} as const satisfies Record<keyof Metrics, number>;

/** A domain's usage in a bucket: [minute or bucket, product, domain, …sums]. */
export type DomainSums = [minute: number, product: TrafficProduct, domain: string, ...sums: Sums];

/** Where each field of `DomainSums` stands. */
export const DOMAIN_SUMS = {
  minute: 0,
  product: 1,
  domain: 2,
  bytesIn: 3,
  bytesOut: 4,
  requests: 5,
  errors: 6,
} as const;

/** A domain row moved to `minute` (a copy). */
function domainSumsAt(row: DomainSums, minute: number): DomainSums {
  return [
    minute,
    row[DOMAIN_SUMS.product],
    row[DOMAIN_SUMS.domain],
    row[DOMAIN_SUMS.bytesIn],
    row[DOMAIN_SUMS.bytesOut],
    row[DOMAIN_SUMS.requests],
    row[DOMAIN_SUMS.errors],
  ];
}

/**
 * Adds a domain row to its domain's row in `byDomain` (which holds one product and bucket): a copy of it moved to
 * `minute` when the domain is new there.
 */
export function addDomainSums(byDomain: Map<string, DomainSums>, row: DomainSums, minute: number): void {
  const domain = row[DOMAIN_SUMS.domain];
  const known = byDomain.get(domain);
  if (known) addSums(known, row, DOMAIN_SUMS.bytesIn, DOMAIN_SUMS.bytesIn);
  else byDomain.set(domain, domainSumsAt(row, minute));
}

/** A product's usage in one minute: [minute, product, …sums]. */
export type MinuteTotal = [minute: number, product: TrafficProduct, ...sums: Sums];

/** Where each field of `MinuteTotal` stands. */
export const MINUTE_TOTAL = { minute: 0, product: 1, bytesIn: 2, bytesOut: 3, requests: 4, errors: 5 } as const;

/** A value's usage in a cumulative series: its sums, and the latest minute it was seen in. */
export type Marginal = [...sums: Sums, latestMinute: number];

/** Where each field of a `Marginal` stands. */
export const MARGINAL = { ...SUMS, latestMinute: 4 } as const;

/** Sums (or a marginal's) with the latest minute they were seen in, as a new marginal. */
export function marginalOf(sums: Sums | Marginal, latestMinute: number): Marginal {
  return [sums[SUMS.bytesIn], sums[SUMS.bytesOut], sums[SUMS.requests], sums[SUMS.errors], latestMinute];
}

/** Per product, dimension and value: the value's marginal. */
export type Marginals = Partial<Record<TrafficProduct, Partial<Record<CumulativeDimension, Record<string, Marginal>>>>>;

/**
 * The dimensions the cumulative series keep (every `group_by` that is not time or domain). Series written before
 * `status` and `error_code` were kept hold none of them: a range's usage of unknown status is its total less its
 * statuses'.
 */
export const CUMULATIVE_DIMENSIONS = ["subuser", "region", "asn", "tag", "ip", "status", "error_code"] as const;
export type CumulativeDimension = (typeof CUMULATIVE_DIMENSIONS)[number];

export function zeroSums(): Sums {
  return [0, 0, 0, 0];
}

/**
 * Adds the four sums found at `offset` of `from` (a row whose sums follow its keys: its index's `bytesIn`) to those
 * at `into` of `target` (a row of the same shape, or bare sums), in place.
 */
export function addSums(target: ArrayLike<unknown>, from: ArrayLike<unknown>, offset = 0, into = 0): void {
  const sums = target as unknown as number[];
  const { bytesIn, bytesOut, requests, errors } = SUMS;
  sums[into + bytesIn] = (sums[into + bytesIn] as number) + (from[offset + bytesIn] as number);
  sums[into + bytesOut] = (sums[into + bytesOut] as number) + (from[offset + bytesOut] as number);
  sums[into + requests] = (sums[into + requests] as number) + (from[offset + requests] as number);
  sums[into + errors] = (sums[into + errors] as number) + (from[offset + errors] as number);
}

/** The sums at `offset` of a row (its index's `bytesIn`), or of bare sums, by name. */
export function metricsOf(sums: ArrayLike<unknown>, offset = 0): Metrics {
  return {
    bytesIn: sums[offset + SUMS.bytesIn] as number,
    bytesOut: sums[offset + SUMS.bytesOut] as number,
    requests: sums[offset + SUMS.requests] as number,
    errors: sums[offset + SUMS.errors] as number,
  };
}

/** A cell's sums (a copy). */
export function cellSums(cell: CellRow): Sums {
  return [cell[CELL.bytesIn], cell[CELL.bytesOut], cell[CELL.requests], cell[CELL.errors]];
}

export function hasUsage(m: Metrics): boolean {
  return m.requests > 0 || m.bytesIn > 0 || m.bytesOut > 0;
}

/**
 * The value of a cell in a dimension (ASNs and statuses as text, as the cumulative series key them); null when the
 * cell has none there: no known status, or no error code (it did not fail).
 */
export function dimensionValue(cell: CellRow, dimension: CumulativeDimension): string | null {
  switch (dimension) {
    case "status": {
      const status = cellStatus(cell);
      return status === null ? null : String(status);
    }
    case "error_code":
      return cellErrorCode(cell);
    case "subuser":
      return cell[CELL.subuserId];
    case "region":
      return cell[CELL.region];
    case "asn":
      return String(cell[CELL.asn]);
    case "tag":
      return cell[CELL.tag];
    case "ip":
      return cell[CELL.ip];
  }
}

/** Cells summed by their key (minute and the nine dimensions). `minuteOf` moves them to a coarser bucket. */
export function sumCells(rows: Iterable<CellRow>, minuteOf: (minute: number) => number = (m) => m): CellRow[] {
  const sums = new Map<string, CellRow>();
  for (const row of rows) {
    const minute = minuteOf(row[CELL.minute]);
    const key =
      `${minute}\u0001${row[CELL.product]}\u0001${row[CELL.subuserId]}\u0001${row[CELL.region]}` +
      `\u0001${row[CELL.asn]}\u0001${row[CELL.tag]}\u0001${row[CELL.carrier]}\u0001${row[CELL.ip]}` +
      `\u0001${cellStatus(row)}\u0001${cellErrorCode(row) ?? ""}`;
    const known = sums.get(key);
    if (known) addSums(known, row, CELL.bytesIn, CELL.bytesIn);
    else {
      sums.set(key, [
        minute,
        row[CELL.product],
        row[CELL.subuserId],
        row[CELL.region],
        row[CELL.asn],
        row[CELL.tag],
        row[CELL.carrier],
        row[CELL.ip],
        row[CELL.bytesIn],
        row[CELL.bytesOut],
        row[CELL.requests],
        row[CELL.errors],
        cellStatus(row),
        cellErrorCode(row),
      ]);
    }
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
    const minute = minuteOf(row[DOMAIN_SUMS.minute]);
    const groupKey = `${minute}\u0001${row[DOMAIN_SUMS.product]}`;
    let group = groups.get(groupKey);
    if (!group) {
      group = new Map();
      groups.set(groupKey, group);
    }
    addDomainSums(group, row, minute);
  }
  const out: DomainSums[] = [];
  for (const group of groups.values()) {
    const named = [...group.values()].filter((row) => row[DOMAIN_SUMS.domain] !== OTHER_DOMAIN).sort(heavierDomain);
    const kept = named.slice(0, DOMAINS_PER_BUCKET);
    const rest = [...named.slice(DOMAINS_PER_BUCKET), ...(group.has(OTHER_DOMAIN) ? [group.get(OTHER_DOMAIN)] : [])];
    out.push(...kept);
    if (rest.length > 0) {
      const first = rest[0] as DomainSums;
      const other: DomainSums = [first[DOMAIN_SUMS.minute], first[DOMAIN_SUMS.product], OTHER_DOMAIN, ...zeroSums()];
      for (const row of rest) addSums(other, row as DomainSums, DOMAIN_SUMS.bytesIn, DOMAIN_SUMS.bytesIn);
      out.push(other);
    }
  }
  return out;
}

/** Bytes in + out, then requests, descending; then the domain: a total order (the same input, the same rows). */
export function heavierDomain(a: DomainSums, b: DomainSums): number {
  const { bytesIn, bytesOut, requests, domain } = DOMAIN_SUMS;
  const bytes = b[bytesIn] + b[bytesOut] - (a[bytesIn] + a[bytesOut]);
  if (bytes !== 0) return bytes;
  if (b[requests] !== a[requests]) return b[requests] - a[requests];
  return a[domain] < b[domain] ? -1 : a[domain] > b[domain] ? 1 : 0;
}

/** Per-minute, per-product totals of cells (the heads that time-grouped totals are read from). */
export function minuteTotals(rows: Iterable<CellRow>, minuteOf: (minute: number) => number = (m) => m): MinuteTotal[] {
  const totals = new Map<string, MinuteTotal>();
  for (const row of rows) {
    const minute = minuteOf(row[CELL.minute]);
    const key = `${minute}\u0001${row[CELL.product]}`;
    const known = totals.get(key);
    if (known) addSums(known, row, CELL.bytesIn, MINUTE_TOTAL.bytesIn);
    else totals.set(key, [minute, row[CELL.product], ...cellSums(row)]);
  }
  return [...totals.values()];
}

/** Adds totals into `target` (merged per minute and product). */
export function mergeTotals(target: MinuteTotal[], more: Iterable<MinuteTotal>): MinuteTotal[] {
  const keyOf = (row: MinuteTotal) => `${row[MINUTE_TOTAL.minute]}\u0001${row[MINUTE_TOTAL.product]}`;
  const byKey = new Map(target.map((row) => [keyOf(row), row]));
  for (const row of more) {
    const key = keyOf(row);
    const known = byKey.get(key);
    if (known) addSums(known, row, MINUTE_TOTAL.bytesIn, MINUTE_TOTAL.bytesIn);
    else {
      const copy: MinuteTotal = [...row];
      byKey.set(key, copy);
      target.push(copy);
    }
  }
  return target;
}

/** Adds cells to marginals (in place): each cell counts once in every dimension. */
export function addCellsToMarginals(marginals: Marginals, rows: Iterable<CellRow>): Marginals {
  for (const row of rows) {
    let product = marginals[row[CELL.product]];
    if (!product) {
      product = {};
      marginals[row[CELL.product]] = product;
    }
    for (const dimension of CUMULATIVE_DIMENSIONS) {
      const value = dimensionValue(row, dimension);
      if (value === null) continue;
      let values = product[dimension];
      if (!values) {
        values = {};
        product[dimension] = values;
      }
      const known = values[value];
      if (known) {
        addSums(known, row, CELL.bytesIn);
        if (row[CELL.minute] > known[MARGINAL.latestMinute]) known[MARGINAL.latestMinute] = row[CELL.minute];
      } else values[value] = marginalOf(cellSums(row), row[CELL.minute]);
    }
  }
  return marginals;
}

import { api, collect, type Product, type Schemas } from "./session";

export type TrafficRow = Schemas["Traffic"]["rows"][number];
export type Split = "total" | "subuser" | "domain";

export interface Series {
  label: string;
  bytesIn: number[];
  bytesOut: number[];
  requests: number[];
}

export interface TrafficSeries {
  /** Bucket starts, epoch seconds. */
  x: number[];
  series: Series[];
  resolution: string;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Series drawn by name; the rest are summed into "Other". */
const TOP = 5;
/** Parallel requests while filling a chart. */
const CONCURRENCY = 4;

export interface Range {
  from: number;
  to: number;
}

/** The last `hours`, to the end of the current hour (the API aligns ranges to its resolution anyway). */
export function lastHours(hours: number, now = Date.now()): Range {
  const to = Math.ceil(now / HOUR) * HOUR;
  return { from: to - hours * HOUR, to };
}

const iso = (ms: number) => new Date(ms).toISOString();

export function traffic(product: Product, range: Range, query: { group_by?: string; subuser?: string } = {}) {
  return api().get("/{product}/traffic", {
    params: {
      path: { product },
      query: { from: iso(range.from), to: iso(range.to), ...query } as { from: string; to: string },
    },
  });
}

/** Rows of a whole range grouped by sub-user or domain, heaviest (bytes in + out) first. */
export async function heaviest(product: Product, range: Range, groupBy: "subuser" | "domain") {
  const answer = await traffic(product, range, { group_by: groupBy });
  return answer.rows.toSorted((a, b) => b.bytes_in + b.bytes_out - (a.bytes_in + a.bytes_out));
}

/**
 * Traffic over time (of one sub-user when `subuser` is given): one series in total, or stacked series of the heaviest sub-users or domains plus "Other".
 * Sub-users: one time-grouped query per sub-user (the API filters by sub-user). Domains: the API groups by domain
 * over a range but neither filters by one nor groups by time and domain at once, so the range is cut into at most
 * 24 buckets, each grouped by domain.
 */
export async function trafficSeries(
  product: Product,
  range: Range,
  split: Split,
  labelOf: (key: string) => string,
  subuser?: string,
): Promise<TrafficSeries> {
  const step = range.to - range.from <= 7 * DAY ? HOUR : DAY;
  const groupBy = step === HOUR ? "hour" : "day";
  const total = await traffic(product, range, { group_by: groupBy, ...(subuser ? { subuser } : {}) });
  const x = buckets(Date.parse(total.from), Date.parse(total.to), step);
  const totalSeries = toSeries("Total", x, total.rows, (row) => bucketOf(row));
  if (split === "total") return { x: x.map((ms) => ms / 1000), series: [totalSeries], resolution: total.resolution };

  if (split === "subuser") {
    const top = (await heaviest(product, range, "subuser")).slice(0, TOP);
    const each = await inParallel(top, async (row) => {
      const answer = await traffic(product, range, { group_by: groupBy, subuser: row.subuser! });
      return toSeries(labelOf(row.subuser!), x, answer.rows, (one) => bucketOf(one));
    });
    return { x: x.map((ms) => ms / 1000), series: withOther(each, totalSeries), resolution: total.resolution };
  }

  const domainStep = Math.max(HOUR, Math.ceil((range.to - range.from) / 24 / HOUR) * HOUR);
  const cuts = buckets(range.from, range.to, domainStep);
  const perCut = await inParallel(cuts, (start) =>
    traffic(product, { from: start, to: Math.min(start + domainStep, range.to) }, { group_by: "domain" }),
  );
  const sums = new Map<string, number>();
  for (const answer of perCut) {
    for (const row of answer.rows) sums.set(row.domain!, (sums.get(row.domain!) ?? 0) + row.bytes_in + row.bytes_out);
  }
  const topDomains = [...sums]
    .filter(([domain]) => domain !== "(other)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([domain]) => domain);
  const rowsAt = (domain: string) =>
    perCut.flatMap((answer, index) =>
      answer.rows.filter((row) => row.domain === domain).map((row) => ({ ...row, at: cuts[index]! })),
    );
  const each = topDomains.map((domain) => toSeries(domain, cuts, rowsAt(domain), (row) => row.at));
  const cutTotal = toSeries(
    "Total",
    cuts,
    perCut.flatMap((answer, index) => answer.rows.map((row) => ({ ...row, at: cuts[index]! }))),
    (row) => row.at,
  );
  return { x: cuts.map((ms) => ms / 1000), series: withOther(each, cutTotal), resolution: perCut[0]?.resolution ?? "" };
}

function bucketOf(row: TrafficRow): number {
  return Date.parse(row.hour ?? `${row.day}T00:00:00Z`);
}

function buckets(from: number, to: number, step: number): number[] {
  const starts: number[] = [];
  for (let at = from; at < to; at += step) starts.push(at);
  return starts;
}

function toSeries<Row extends TrafficRow>(label: string, x: number[], rows: Row[], at: (row: Row) => number): Series {
  const index = new Map(x.map((start, position) => [start, position]));
  const series: Series = {
    label,
    bytesIn: x.map(() => 0),
    bytesOut: x.map(() => 0),
    requests: x.map(() => 0),
  };
  for (const row of rows) {
    const position = index.get(at(row));
    if (position === undefined) continue;
    series.bytesIn[position]! += row.bytes_in;
    series.bytesOut[position]! += row.bytes_out;
    series.requests[position]! += row.requests;
  }
  return series;
}

/** The named series and "Other": the total less them (never below zero), when anything is left. */
function withOther(named: Series[], total: Series): Series[] {
  const rest = (pick: (series: Series) => number[]) =>
    pick(total).map((value, point) =>
      Math.max(
        0,
        named.reduce((left, series) => left - pick(series)[point]!, value),
      ),
    );
  const other: Series = {
    label: "Other",
    bytesIn: rest((series) => series.bytesIn),
    bytesOut: rest((series) => series.bytesOut),
    requests: rest((series) => series.requests),
  };
  const hasOther = other.requests.some((value) => value > 0) || other.bytesIn.some((value) => value > 0);
  return hasOther ? [...named, other] : named;
}

async function inParallel<Item, Result>(items: Item[], run: (item: Item) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await run(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return results;
}

/** Sub-user ids → labels, for charts and tables. */
export async function subuserLabels(): Promise<Map<string, string>> {
  const all = await collect(api().paginate("/subusers", { params: { query: { limit: 100 } } }));
  return new Map(all.map((subuser) => [subuser.id, subuser.label]));
}

import type { operations, Product, ProxyAccountClient, Schemas } from "./api";

export type TrafficRow = Schemas["Traffic"]["rows"][number];
type Resolution = Schemas["Traffic"]["resolution"];
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
  resolution: Resolution;
}

export interface Range {
  from: number;
  to: number;
}

/** A traffic query's grouping and filters (its range is given apart). */
export type TrafficQuery = Omit<operations["getTraffic"]["parameters"]["query"], "from" | "to">;

/** One traffic query over a range: the API's `GET /{product}/traffic` (`trafficSource`), or a stand-in. */
export type TrafficSource = (range: Range, query: TrafficQuery) => Promise<Schemas["Traffic"]>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const RESOLUTION_MS: Record<Resolution, number> = { "1m": MINUTE, "5m": 5 * MINUTE, "1h": HOUR, "1d": DAY };
/** Series drawn by name; the rest are summed into "Other". */
const TOP = 5;
/** Rows of a top table. */
const TOP_ROWS = 10;
/** The most by-domain queries one chart asks (the API groups by domain over a range, never by time and domain). */
const MAX_DOMAIN_QUERIES = 24;
/** The API's row of the domains past its bound: never drawn by name. */
const OTHER_DOMAINS = "(other)";
/** Parallel requests while filling a chart. */
const CONCURRENCY = 4;

/** The last `hours`, to the end of the current hour (the API aligns ranges to its resolution anyway). */
export function lastHours(hours: number, now = Date.now()): Range {
  const to = Math.ceil(now / HOUR) * HOUR;
  return { from: to - hours * HOUR, to };
}

/** The traffic of a product from the API; of one sub-user's alone with `subuser`. */
export function trafficSource(client: ProxyAccountClient, product: Product, subuser?: string): TrafficSource {
  return (range, query) =>
    client.get("/{product}/traffic", {
      params: {
        path: { product },
        query: { from: iso(range.from), to: iso(range.to), ...(subuser ? { subuser } : {}), ...query },
      },
    });
}

/**
 * The `limit` heaviest rows (bytes in + out) of a whole range grouped by sub-user (with their labels) or domain:
 * one call, the API ranks them, whatever the number of sub-users.
 */
export async function heaviest(source: TrafficSource, range: Range, groupBy: "subuser" | "domain", limit = TOP_ROWS) {
  const answer = await source(range, {
    group_by: groupBy,
    order_by: "bytes",
    limit,
    ...(groupBy === "subuser" ? { labels: "true" } : {}),
  });
  return answer.rows;
}

/** The exact breakdown of a range's requests by a failure's HTTP status or gateway code, heaviest first. */
export async function failures(source: TrafficSource, range: Range, groupBy: "status" | "error_code") {
  const answer = await source(range, { group_by: groupBy, order_by: "errors", limit: TOP_ROWS });
  return answer.rows.filter((row) => row.errors > 0);
}

/**
 * Traffic over time: one series in total, or stacked series of the heaviest sub-users or domains plus "Other".
 * Sub-users: one time-grouped query per sub-user (the API filters by sub-user). Domains: see `byDomain`.
 */
export async function trafficSeries(
  source: TrafficSource,
  range: Range,
  split: Split,
  labelOf: (row: TrafficRow) => string = (row) => rowLabel(row) ?? row.subuser!,
): Promise<TrafficSeries> {
  if (split === "domain") return byDomain(source, range);
  const step = range.to - range.from <= 7 * DAY ? HOUR : DAY;
  const groupBy = step === HOUR ? "hour" : "day";
  const total = await source(range, { group_by: groupBy });
  // Buckets start where the API's do (a day at midnight UTC), whatever hour the range starts at.
  const x = buckets(floor(Date.parse(total.from), step), Date.parse(total.to), step);
  const totalSeries = toSeries("Total", x, total.rows.map(atItsBucket));
  if (split === "total") return { x: seconds(x), series: [totalSeries], resolution: total.resolution };

  const top = (await heaviest(source, range, "subuser")).slice(0, TOP);
  const each = await inParallel(top, async (row) => {
    const answer = await source(range, { group_by: groupBy, subuser: row.subuser! });
    return toSeries(labelOf(row), x, answer.rows.map(atItsBucket));
  });
  return { x: seconds(x), series: withOther(each, totalSeries), resolution: total.resolution };
}

/**
 * Domains over time: the API groups by domain over a range but neither filters by one nor groups by time and domain
 * at once, so the range is cut into at most `MAX_DOMAIN_QUERIES` cuts, each grouped by domain. A first ungrouped
 * query gives the range as the API widens it and its resolution: the cuts are whole units of it, so the API widens
 * none of them and no minute is counted twice.
 */
async function byDomain(source: TrafficSource, range: Range): Promise<TrafficSeries> {
  const whole = await source(range, {});
  const cuts = cutsOf({ from: Date.parse(whole.from), to: Date.parse(whole.to) }, whole.resolution);
  const perCut = await inParallel(cuts, (cut) => source(cut, { group_by: "domain" }));
  const points = perCut.flatMap((answer, index) => answer.rows.map((row) => ({ at: cuts[index]!.from, row })));
  const sums = new Map<string, number>();
  for (const { row } of points) sums.set(row.domain!, (sums.get(row.domain!) ?? 0) + volume(row));
  const topDomains = [...sums]
    .filter(([domain]) => domain !== OTHER_DOMAINS)
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([domain]) => domain);
  const x = cuts.map((cut) => cut.from);
  const each = topDomains.map((domain) =>
    toSeries(
      domain,
      x,
      points.filter(({ row }) => row.domain === domain),
    ),
  );
  return { x: seconds(x), series: withOther(each, toSeries("Total", x, points)), resolution: whole.resolution };
}

/** At most `MAX_DOMAIN_QUERIES` ranges end to end over `range`, each of whole hours and whole units of `resolution`. */
function cutsOf(range: Range, resolution: Resolution): Range[] {
  const unit = Math.max(HOUR, RESOLUTION_MS[resolution]);
  const step = Math.ceil((range.to - range.from) / MAX_DOMAIN_QUERIES / unit) * unit;
  return buckets(range.from, range.to, step).map((from) => ({ from, to: Math.min(from + step, range.to) }));
}

/** A row and the start of the bucket it counts in. */
interface Point {
  at: number;
  row: TrafficRow;
}

function atItsBucket(row: TrafficRow): Point {
  return { at: Date.parse(row.hour ?? `${row.day}T00:00:00Z`), row };
}

function buckets(from: number, to: number, step: number): number[] {
  const starts: number[] = [];
  for (let at = from; at < to; at += step) starts.push(at);
  return starts;
}

/** The series of the points in buckets `x` (a point outside them counts nowhere). */
function toSeries(label: string, x: number[], points: Point[]): Series {
  const index = new Map(x.map((start, position) => [start, position]));
  const series: Series = {
    label,
    bytesIn: x.map(() => 0),
    bytesOut: x.map(() => 0),
    requests: x.map(() => 0),
  };
  for (const { at, row } of points) {
    const position = index.get(at);
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

const iso = (ms: number) => new Date(ms).toISOString();
const seconds = (starts: number[]) => starts.map((ms) => ms / 1000);
const floor = (ms: number, step: number) => ms - (ms % step);
const volume = (row: TrafficRow) => row.bytes_in + row.bytes_out;

/**
 * The label a `group_by=subuser` row carries: the API is adding it to those rows, and the client's type may not have
 * it yet. None: the page names the sub-user as it can (`SubuserLink`).
 */
export function rowLabel(row: TrafficRow): string | undefined {
  return (row as TrafficRow & { label?: string | null }).label ?? undefined;
}

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  heaviest,
  lastHours,
  type Range,
  type Series,
  type TrafficQuery,
  type TrafficRow,
  type TrafficSource,
  trafficSeries,
} from "../../console/src/traffic-data";
import { alignRange, resolutionFor } from "../../src/domain/traffic/resolution";
import { RESOLUTION_MS, type Resolution } from "../../src/durable-objects/traffic-store/contract";
import { DAY, HOUR, MINUTE } from "../../src/platform/clock";

/** The charts' clock: a Friday, 10:20 UTC. */
const NOW = Date.UTC(2026, 10, 20, 10, 20);

/** One request the gateway reported. */
interface Request {
  at: number;
  subuser: string;
  domain: string;
  bytesIn: number;
  bytesOut: number;
}

/**
 * `GET /{product}/traffic` over `requests`, answered as the API answers (src/domain/traffic/traffic.ts): the range
 * widened to whole units of the resolution the age of its start gives, `hour` and `day` groups never finer than
 * that resolution. Every query is logged.
 */
function fakeApi(requests: Request[]) {
  const queries: { range: Range; query: TrafficQuery }[] = [];
  const source: TrafficSource = async (range, query) => {
    queries.push({ range, query });
    const resolution = resolutionFor(range.from, NOW);
    const answered = alignRange(range.from, range.to, resolution);
    const counted = requests.filter(
      (one) => within(answered, one.at) && (query.subuser === undefined || one.subuser === query.subuser),
    );
    const keyOf = groupKey(query.group_by, resolution);
    const groups = Map.groupBy(counted, (one) => JSON.stringify(keyOf(one)));
    const rows = [...groups].map(([key, group]) => ({ ...JSON.parse(key), ...totals(group) }));
    // As the API ranks: heaviest first by bytes in + out, then the first `limit`.
    const ranked =
      query.order_by === "bytes"
        ? rows.toSorted((a, b) => b.bytes_in + b.bytes_out - (a.bytes_in + a.bytes_out))
        : rows;
    return {
      from: new Date(answered.from).toISOString(),
      to: new Date(answered.to).toISOString(),
      resolution,
      rows: query.limit === undefined ? ranked : ranked.slice(0, query.limit),
    };
  };
  return { source, queries };
}

function groupKey(groupBy: TrafficQuery["group_by"], resolution: Resolution): (one: Request) => Partial<TrafficRow> {
  const startOf = (at: number, span: number) => new Date(at - (at % Math.max(span, RESOLUTION_MS[resolution])));
  switch (groupBy) {
    case undefined:
      return () => ({});
    case "hour":
      return (one) => ({ hour: startOf(one.at, HOUR).toISOString() });
    case "day":
      return (one) => ({ day: startOf(one.at, DAY).toISOString().slice(0, 10) });
    case "subuser":
      return (one) => ({ subuser: one.subuser });
    case "domain":
      return (one) => ({ domain: one.domain });
    default:
      throw new Error(`the charts never group by ${groupBy}`);
  }
}

function totals(group: Request[]) {
  return {
    bytes_in: sum(group.map((one) => one.bytesIn)),
    bytes_out: sum(group.map((one) => one.bytesOut)),
    requests: group.length,
    errors: 0,
    error_rate: 0,
  };
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
const within = (range: Range, at: number) => at >= range.from && at < range.to;
const requestsIn = (series: Series[]) => sum(series.flatMap((one) => one.requests));
const labels = (series: Series[]) => series.map((one) => one.label);
const request = (at: number, changes: Partial<Request> = {}): Request => ({
  at,
  subuser: "sub_a",
  domain: "example.com",
  bytesIn: 1000,
  bytesOut: 100,
  ...changes,
});

/**
 * A range as the console asks for one (the last N hours, or whole UTC days): it starts and ends on the hour, up to
 * 90 days long, starting up to 180 days ago (past 90 days the API has days only).
 */
const consoleRange = fc
  .record({ startHoursAgo: fc.integer({ min: 1, max: 180 * 24 }), hours: fc.integer({ min: 1, max: 90 * 24 }) })
  .map(({ startHoursAgo, hours }): Range => {
    const from = Math.floor(NOW / HOUR) * HOUR - startHoursAgo * HOUR;
    return { from, to: Math.min(from + hours * HOUR, Math.ceil(NOW / HOUR) * HOUR) };
  });

/** Requests around a range (some just outside it), over 7 sub-users and 8 domains, plus the API's "(other)". */
const requestsAround = (range: Range) =>
  fc.array(
    fc.record({
      at: fc.integer({ min: range.from - 2 * DAY, max: range.to + 2 * DAY }),
      subuser: fc.constantFrom(...["a", "b", "c", "d", "e", "f", "g"].map((name) => `sub_${name}`)),
      domain: fc.constantFrom("(other)", ...["a", "b", "c", "d", "e", "f", "g", "h"].map((name) => `${name}.com`)),
      bytesIn: fc.nat({ max: 10_000 }),
      bytesOut: fc.nat({ max: 10_000 }),
    }),
    { maxLength: 200 },
  );

describe("the console's traffic charts (console/src/traffic-data.ts)", () => {
  it("lastHours: the range ends at the end of the current hour and spans exactly the hours asked", () => {
    expect(lastHours(24, NOW)).toEqual({ from: Date.UTC(2026, 10, 19, 11), to: Date.UTC(2026, 10, 20, 11) });
    const onTheHour = Date.UTC(2026, 10, 20, 11);
    expect(lastHours(1, onTheHour)).toEqual({ from: Date.UTC(2026, 10, 20, 10), to: onTheHour });
  });

  it("split by domain: at most 24 by-domain requests, whose ranges the API widens not at all and which lie end to end over the range it answers", async () => {
    await fc.assert(
      fc.asyncProperty(consoleRange, async (range) => {
        const api = fakeApi([]);
        await trafficSeries(api.source, range, "domain");
        const cuts = api.queries.filter(({ query }) => query.group_by === "domain").map((one) => one.range);
        expect(cuts.length).toBeGreaterThanOrEqual(1);
        expect(cuts.length).toBeLessThanOrEqual(24);
        for (const cut of cuts) expect(alignRange(cut.from, cut.to, resolutionFor(cut.from, NOW))).toEqual(cut);
        const answered = alignRange(range.from, range.to, resolutionFor(range.from, NOW));
        expect(cuts[0]!.from).toBe(answered.from);
        expect(cuts.at(-1)!.to).toBe(answered.to);
        for (let next = 1; next < cuts.length; next++) expect(cuts[next]!.from).toBe(cuts[next - 1]!.to);
      }),
      { numRuns: 300 },
    );
  });

  it("whatever the split, each request of the range counts once: the series (named, then Other) add up to the range's traffic", async () => {
    await fc.assert(
      fc.asyncProperty(
        consoleRange.chain((range) => fc.tuple(fc.constant(range), requestsAround(range))),
        fc.constantFrom("total" as const, "subuser" as const, "domain" as const),
        async ([range, requests], split) => {
          const chart = await trafficSeries(fakeApi(requests).source, range, split);
          const answered = alignRange(range.from, range.to, resolutionFor(range.from, NOW));
          expect(requestsIn(chart.series)).toBe(requests.filter((one) => within(answered, one.at)).length);
          const named = labels(chart.series).filter((label) => label !== "Other");
          expect(named.length).toBeLessThanOrEqual(split === "total" ? 1 : 5);
          expect(new Set(named).size).toBe(named.length);
          expect(named).not.toContain("(other)");
          for (const series of chart.series) expect(series.requests).toHaveLength(chart.x.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("split by domain: each cut's traffic stands at the cut's start, the five heaviest domains by name, the API's (other) only in Other", async () => {
    const range = lastHours(24, NOW);
    const heavy = ["a.com", "b.com", "c.com", "d.com", "e.com"];
    const requests = [
      ...heavy.map((domain, index) => request(range.from + index * HOUR, { domain, bytesIn: 10_000 - index })),
      request(range.from + 30 * MINUTE, { domain: "light.com", bytesIn: 1 }),
      request(range.from + 90 * MINUTE, { domain: "(other)", bytesIn: 1_000_000 }),
    ];
    const chart = await trafficSeries(fakeApi(requests).source, range, "domain");
    expect(chart.x).toEqual(Array.from({ length: 24 }, (_, cut) => (range.from + cut * HOUR) / 1000));
    expect(labels(chart.series)).toEqual([...heavy, "Other"]);
    expect(chart.series.at(-1)!.requests.slice(0, 3)).toEqual([1, 1, 0]);
  });

  it("split by sub-user: the five heaviest by their labels, heaviest first, and Other is the rest", async () => {
    const range = lastHours(24, NOW);
    const requests = ["a", "b", "c", "d", "e", "f", "g"].map((name, index) =>
      request(range.from + index * HOUR, { subuser: `sub_${name}`, bytesIn: 7000 - 1000 * index }),
    );
    const chart = await trafficSeries(fakeApi(requests).source, range, "subuser", (row) =>
      row.subuser!.replace("sub_", "user "),
    );
    expect(labels(chart.series)).toEqual(["user a", "user b", "user c", "user d", "user e", "Other"]);
    const other = chart.series.at(-1)!;
    expect(other.requests.slice(0, 7)).toEqual([0, 0, 0, 0, 0, 1, 1]);
    expect(other.bytesIn.slice(5, 7)).toEqual([2000, 1000]);
  });

  it("over more than 7 days, a point is a UTC day: each day's traffic stands at its midnight, wherever the range's first hour falls", async () => {
    const range = lastHours(30 * 24, NOW);
    const firstDay = Date.UTC(2026, 9, 21);
    const requests = [request(range.from + HOUR), request(firstDay + DAY + 5 * HOUR), request(NOW - MINUTE)];
    const chart = await trafficSeries(fakeApi(requests).source, range, "total");
    expect(chart.x[0]).toBe(firstDay / 1000);
    expect(chart.x).toHaveLength(31);
    expect(chart.series[0]!.requests.filter((count) => count > 0)).toEqual([1, 1, 1]);
    expect(chart.series[0]!.requests.slice(0, 2)).toEqual([1, 1]);
    expect(chart.series[0]!.requests.at(-1)).toBe(1);
  });

  it("one point: an hour's range is one bucket holding the hour's traffic", async () => {
    const range = lastHours(1, NOW);
    const chart = await trafficSeries(
      fakeApi([request(NOW - MINUTE), request(NOW - 2 * MINUTE)]).source,
      range,
      "total",
    );
    expect(chart.x).toEqual([range.from / 1000]);
    expect(chart.series).toEqual([{ label: "Total", bytesIn: [2000], bytesOut: [200], requests: [2] }]);
  });

  it("no traffic: the total is one series of zeros, and a split draws no series at all (no empty Other)", async () => {
    const range = lastHours(24, NOW);
    const total = await trafficSeries(fakeApi([]).source, range, "total");
    expect(total.x).toHaveLength(24);
    expect(labels(total.series)).toEqual(["Total"]);
    expect(total.series[0]!.requests.every((count) => count === 0)).toBe(true);
    for (const split of ["subuser", "domain"] as const) {
      expect((await trafficSeries(fakeApi([]).source, range, split)).series).toEqual([]);
    }
  });

  it("Other is the total less the named series, never below zero (a sub-user's query may count more than the total did)", async () => {
    const range = lastHours(1, NOW);
    const hour = new Date(range.from).toISOString();
    const row = (requests: number, key: Partial<TrafficRow>): TrafficRow => ({
      ...key,
      bytes_in: 10 * requests,
      bytes_out: 0,
      requests,
      errors: 0,
      error_rate: 0,
    });
    // The total is read first; the sub-user's own query, a moment later, has more traffic in.
    const source: TrafficSource = async (_range, query) => ({
      from: hour,
      to: new Date(range.to).toISOString(),
      resolution: "1m",
      rows: query.group_by === "subuser" ? [row(10, { subuser: "sub_a" })] : [row(query.subuser ? 15 : 10, { hour })],
    });
    const chart = await trafficSeries(source, range, "subuser");
    expect(labels(chart.series)).toEqual(["sub_a"]);
  });

  it("heaviest: one call that has the API rank the rows by bytes in and out together, the first ten, with labels", async () => {
    const range = lastHours(24, NOW);
    const requests = [
      request(range.from, { subuser: "sub_in", bytesIn: 500, bytesOut: 0 }),
      request(range.from, { subuser: "sub_both", bytesIn: 300, bytesOut: 300 }),
      request(range.from, { subuser: "sub_out", bytesIn: 0, bytesOut: 550 }),
    ];
    const api = fakeApi(requests);
    const rows = await heaviest(api.source, range, "subuser");
    expect(rows.map((row) => row.subuser)).toEqual(["sub_both", "sub_out", "sub_in"]);
    expect(api.queries.map(({ query }) => query)).toEqual([
      { group_by: "subuser", order_by: "bytes", limit: 10, labels: "true" },
    ]);
  });
});

import { env, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TrafficStore } from "../../src/durable-objects/traffic-store";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import {
  type Cell,
  FULL_LOG_RATE,
  keepsSample,
  keptBelowRate,
  type SampleCandidate,
  samplingRate,
} from "../../src/durable-objects/traffic-store/contract";

const MINUTE = 60_000;

describe("request-log sampling (pure rules)", () => {
  it("keeps every candidate of an account under 100 requests a minute", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 0, max: FULL_LOG_RATE }), (requestId, rate) => {
        expect(keepsSample({ requestId, weight: 1 }, rate)).toBe(true);
      }),
    );
  });

  it("keeps at a lower rate every candidate it keeps at a higher one (so the route may sample by a lower figure)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.double({ min: 1, max: 50, noNaN: true }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (requestId, weight, a, b) => {
          const [lower, higher] = a <= b ? [a, b] : [b, a];
          if (keepsSample({ requestId, weight }, higher)) expect(keepsSample({ requestId, weight }, lower)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("keeps about 100 × weight / rate of the candidates", () => {
    const kept = Array.from({ length: 10_000 }, (_, i) => `req_${i}`).filter((requestId) =>
      keepsSample({ requestId, weight: 2 }, 1000),
    ).length;
    expect(kept).toBeGreaterThan(1800);
    expect(kept).toBeLessThan(2200);
  });

  it("samples at the count of the request's own minute, so a quiet minute after a busy one keeps every request", () => {
    const counts = new Map([
      [10 * MINUTE, 1000],
      [11 * MINUTE, 60],
    ]);
    const countOf = (minute: number) => counts.get(minute) ?? 0;
    expect(samplingRate(11 * MINUTE + 5_000, countOf)).toBe(60);
    expect(samplingRate(10 * MINUTE + 59_999, countOf)).toBe(1000);
    expect(samplingRate(12 * MINUTE, countOf)).toBe(0);
  });

  it("keeps a candidate exactly while the rate is below its kept-below rate (the figure the store thins by)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.double({ min: 1, max: 50, noNaN: true }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (requestId, weight, rate) => {
          const sample = { requestId, weight };
          expect(keepsSample(sample, rate)).toBe(Math.max(1, rate) < keptBelowRate(sample));
          expect(keptBelowRate(sample)).toBeGreaterThan(FULL_LOG_RATE * weight);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe("the request log (in an account's traffic store)", () => {
  const candidate = (requestId: string, ts: number, weight = 1): SampleCandidate => ({
    requestId,
    ts,
    product: "residential",
    subuserId: "sub_a",
    method: "GET",
    targetHost: "example.com",
    status: 200,
    bytes: 100,
    exitIp: "203.0.113.1",
    exitGeo: "us/ca/la",
    exitAsn: 7922,
    tag: null,
    weight,
  });
  const cell = (minute: number, requests: number): Cell => ({
    minute,
    product: "residential",
    subuserId: "sub_a",
    region: "us",
    asn: 7922,
    tag: "",
    carrier: "",
    ip: "",
    bytesIn: 100 * requests,
    bytesOut: 0,
    requests,
    errors: 0,
  });
  const FIGURES = { pools: [], subusers: [], months: [] };

  it("thins a minute's entries to its new count as the count grows, leaves other minutes alone, and reads the same back after a restart", async () => {
    const store = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`log-${crypto.randomUUID()}`));
    const at = Date.now() - (Date.now() % MINUTE);
    const busy = at - 10 * MINUTE;
    const quiet = busy + MINUTE;
    const first = Array.from({ length: 90 }, (_, i) => candidate(`req_b${i}`, busy + i));
    const others = Array.from({ length: 10 }, (_, i) => candidate(`req_q${i}`, quiet + i));
    const listed = (traffic: AccountTraffic) =>
      traffic
        .requests({ product: "residential", limit: 1000 }, at)
        .map((entry) => entry.requestId)
        .sort();
    let kept: string[] = [];
    await runInDurableObject(store, (_store: TrafficStore, state) => {
      const traffic = new AccountTraffic(state.storage);
      const part = (key: string, cells: Cell[], samples: SampleCandidate[]) =>
        traffic.ingest({ accountId: "usr_log", parts: [{ key, receivedAt: at, cells, samples }] }, FIGURES, at);
      part("p1", [cell(busy, 90), cell(quiet, 10)], [...first, ...others]);
      expect(listed(traffic)).toEqual([...first, ...others].map((c) => c.requestId).sort());
      // 910 more requests in the busy minute, none of them offered: its entries are thinned to the 1,000's rate.
      part("p2", [cell(busy, 910)], []);
      kept = listed(traffic);
      const stillKept = first.filter((c) => keepsSample(c, 1000)).map((c) => c.requestId);
      expect(kept).toEqual([...stillKept, ...others.map((c) => c.requestId)].sort());
      expect(stillKept.length).toBeLessThan(first.length);
    });
    await runInDurableObject(store, (_store: TrafficStore, state) => {
      expect(listed(new AccountTraffic(state.storage))).toEqual(kept);
    });
  });
});

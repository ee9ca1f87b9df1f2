import { env, runInDurableObject } from "cloudflare:test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TrafficStore } from "../../src/durable-objects/traffic-store";
import {
  FULL_LOG_RATE,
  keepsSample,
  keptBelowRate,
  type SampleCandidate,
  samplingRate,
} from "../../src/durable-objects/traffic-store/contract";
import { RequestLog } from "../../src/durable-objects/traffic-store/request-log";

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

describe("RequestLog (in a Durable Object's SQLite)", () => {
  const freshStore = () => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`log-${crypto.randomUUID()}`));
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
  const at = Date.now() - (Date.now() % MINUTE) - 10 * MINUTE;
  const ids = (log: RequestLog) =>
    log
      .list({ product: "residential", limit: 1000 }, Date.now())
      .map((entry) => entry.requestId)
      .sort();

  it("thins a minute's entries to its new count as the count grows, leaving other minutes alone", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const log = new RequestLog(state.storage);
      const counts = new Map<number, number>();
      const early = Array.from({ length: 99 }, (_, i) => candidate(`req_early${i}`, at + i * 100));
      const quiet = Array.from({ length: 60 }, (_, i) => candidate(`req_quiet${i}`, at + MINUTE + i * 100));
      counts.set(at, 99);
      counts.set(at + MINUTE, 60);
      log.add([...early, ...quiet], [at, at + MINUTE], (minute) => counts.get(minute) ?? 0, Date.now());
      expect(ids(log)).toHaveLength(159);

      // 901 more requests in the first minute, none of them a candidate that is kept: its first 99 are thinned.
      counts.set(at, 1000);
      log.add([], [at], (minute) => counts.get(minute) ?? 0, Date.now());
      const expected = [...early.filter((sample) => keepsSample(sample, 1000)), ...quiet].map((s) => s.requestId);
      expect(ids(log)).toEqual(expected.sort());
      expect(expected.length).toBeLessThan(80);
    });
  });

  it("adds kept_below to a log created before it, keeping the entries it had (never thinned)", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const sql = state.storage.sql;
      // A log from before `kept_below` (and before storage versions).
      sql.exec("DELETE FROM _storage_versions WHERE area = 'request_log'");
      sql.exec("DROP TABLE request_log");
      sql.exec(`CREATE TABLE request_log (
        product TEXT NOT NULL, ts INTEGER NOT NULL, request_id TEXT NOT NULL, subuser TEXT NOT NULL,
        method TEXT NOT NULL, target_host TEXT NOT NULL, status INTEGER NOT NULL, bytes INTEGER NOT NULL,
        exit_ip TEXT NOT NULL, exit_geo TEXT NOT NULL, exit_asn INTEGER NOT NULL, tag TEXT,
        PRIMARY KEY (product, ts, request_id)) WITHOUT ROWID`);
      sql.exec(
        `INSERT INTO request_log VALUES ('residential', ?, 'req_old', 'sub_a', 'GET', 'example.com', 200, 1,
          '203.0.113.1', 'us/ca/la', 7922, NULL)`,
        at,
      );
      const log = new RequestLog(state.storage);
      log.add([candidate("req_new", at + 1)], [at], () => 1_000_000, Date.now());
      expect(ids(log)).toEqual(["req_old"]);
      log.add([candidate("req_new", at + 1)], [at], () => 1, Date.now());
      expect(ids(log)).toEqual(["req_new", "req_old"]);
    });
  });
});

import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { Cell, SampleCandidate, SpikeAlert, StorePart } from "../../src/durable-objects/traffic-store/contract";
import { SPIKE_WATCH_STATE } from "../../src/durable-objects/traffic-store/spike-watch-state";
import v1 from "../fixtures/spike-watch-state-v1.json";
import v2 from "../fixtures/spike-watch-state-v2.json";
import v3 from "../fixtures/spike-watch-state-v3.json";

/**
 * The spike watch's state as earlier code saved it, before the state had a version: `spike-watch-state-v1.json` by
 * the code before baselines read past days (no `days`), `spike-watch-state-v2.json` by the code since, and
 * `spike-watch-state-v3.json` by the code with lessons and each track's prior rate (today's shape). Each is the `spike_watch` row's body that code left after `runScenario` below, dumped: an account's store
 * where a sub-user that used 1 GB/h the day before (today's baseline reads its last days) leaks 30 GB/h for 20
 * minutes (an episode opens, its start waits in the outbox), another at `high` uses a little (a track, no episode)
 * and a third is `off`.
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 23, 12);
const LEAKING = "sub_leak";
const GB = 1e9;
const FIGURES = { pools: [], subusers: [], months: [] };

let parts = 0;

/** Usage of `subuserId` for each minute of [from, from + minutes), at `gbPerHour`, one sampled request a minute. */
function usage(subuserId: string, from: number, minutes: number, gbPerHour: number): StorePart {
  const cells: Cell[] = [];
  const samples: SampleCandidate[] = [];
  for (let m = 0; m < minutes; m++) {
    const minute = from + m * MINUTE;
    const bytes = Math.round((gbPerHour * GB) / 60);
    cells.push({
      minute,
      product: "residential",
      subuserId,
      region: "us",
      asn: 7922,
      tag: "",
      carrier: "",
      ip: "",
      bytesIn: bytes - 100,
      bytesOut: 100,
      requests: 60,
      errors: 0,
    });
    samples.push({
      requestId: `req_${subuserId}_${minute}`,
      ts: minute + 1000,
      product: "residential",
      subuserId,
      method: "GET",
      targetHost: m % 4 === 0 ? "img.leaky-site.com" : "api.leaky-site.com",
      status: 200,
      bytes,
      exitIp: "192.0.2.7",
      exitGeo: "us",
      exitAsn: 7922,
      tag: null,
      weight: 60,
    });
  }
  const source = { subuserId, block: "203.0.113.0/24", firstSeen: from, lastSeen: from + minutes * MINUTE };
  return {
    key: `part-${++parts}`,
    receivedAt: from + minutes * MINUTE,
    cells,
    samples,
    sources: [{ ...source, requests: 60 * minutes, bytes: Math.round(gbPerHour * GB * (minutes / 60)) }],
  };
}

/** Posts usage to the store at `at`. */
function ingest(traffic: AccountTraffic, at: number, ...fresh: StorePart[]): void {
  traffic.ingest({ accountId: "usr_spikes", parts: fresh }, FIGURES, at);
}

/** The leak's usage from `from` for `minutes`. */
const leak = (from: number, minutes: number) => usage(LEAKING, from, minutes, 30);

/** Runs the scenario on a store: the state it leaves is the fixtures'. */
function runScenario(storage: DurableObjectStorage): AccountTraffic {
  const traffic = new AccountTraffic(storage);
  traffic.configureSpikes("sub_high", "high", T0 - DAY - 2 * HOUR);
  traffic.configureSpikes("sub_off", "off", T0 - DAY - 2 * HOUR);
  // Yesterday, the same hour ±1.
  ingest(traffic, T0 - DAY + 2 * HOUR, usage(LEAKING, T0 - DAY - HOUR, 180, 1));
  traffic.maintain(T0 - DAY + 3 * HOUR);
  ingest(traffic, T0 + 20 * MINUTE, leak(T0, 20), usage("sub_high", T0 + 10 * MINUTE, 10, 0.5));
  traffic.maintain(T0 + 27 * MINUTE);
  return traffic;
}

/** The spike watch's row: its version and its state. */
function storedRow(sql: SqlStorage): { version: number; state: unknown } {
  const row = sql.exec<{ body: string; version: number }>("SELECT body, version FROM spike_watch WHERE id = 1").one();
  return { version: row.version, state: JSON.parse(row.body) };
}

/** A JSON value's shape: its keys and the types of their values, all the way down (an array: its elements'). */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return [...new Set(value.map((v) => JSON.stringify(shapeOf(v))))].map((s) => JSON.parse(s));
  if (value === null || typeof value !== "object") return value === null ? "null" : typeof value;
  const keys = Object.keys(value).sort();
  return Object.fromEntries(keys.map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]));
}

const freshStore = () => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`spike-state-${crypto.randomUUID()}`));

/** The episode's course after the scenario: the leak goes on 10 minutes, then stops; the alerts raised, in order. */
function goOn(traffic: AccountTraffic): SpikeAlert[] {
  const raised: SpikeAlert[] = [];
  const take = () => {
    const alerts = traffic.spikeAlerts();
    raised.push(...alerts);
    traffic.confirmSpikeAlerts(alerts.map((alert) => ({ spikeId: alert.spikeId, kind: alert.kind })));
  };
  take();
  ingest(traffic, T0 + 35 * MINUTE, leak(T0 + 25 * MINUTE, 10));
  traffic.maintain(T0 + 42 * MINUTE);
  take();
  traffic.maintain(T0 + 90 * MINUTE);
  take();
  traffic.maintain(T0 + 100 * MINUTE);
  take();
  return raised;
}

describe("the spike watch's state: shape versions", () => {
  it("reads a state saved before baselines had days with none read (0); before lessons with none and no prior rates", () => {
    expect(SPIKE_WATCH_STATE.version).toBe(3);
    expect(SPIKE_WATCH_STATE.read({ body: JSON.stringify(v3), version: 3 })).toEqual(v3);
    const noPriors = (tracks: Record<string, object>) =>
      Object.fromEntries(Object.entries(tracks).map(([id, track]) => [id, { ...track, prior: null }]));
    expect(SPIKE_WATCH_STATE.read({ body: JSON.stringify(v2), version: 1 })).toEqual({
      ...v2,
      tracks: noPriors(v2.tracks),
      lessons: {},
    });
    const leaking = v1.tracks.sub_leak;
    expect(SPIKE_WATCH_STATE.read({ body: JSON.stringify(v1), version: 1 })).toEqual({
      ...v1,
      tracks: noPriors({
        ...v1.tracks,
        sub_leak: { ...leaking, episode: { ...leaking.episode, baseline: { ...leaking.episode.baseline, days: 0 } } },
      }),
      outbox: v1.outbox.map((alert) => ({ ...alert, baseline: { ...alert.baseline, days: 0 } })),
      lessons: {},
    });
  });

  // A field added to the state without a shape step fails here.
  it("today's code writes the state at version 3, in the v3 fixture's shape", async () => {
    await runInDurableObject(freshStore(), (_store, state) => {
      runScenario(state.storage);
      const { version, state: saved } = storedRow(state.storage.sql);
      expect(version).toBe(3);
      expect(shapeOf(saved)).toEqual(shapeOf(v3));
    });
  });

  for (const [saved, fixture, days] of [
    ["before baselines had days (v1)", v1, 0],
    ["by the code before lessons, unversioned (v2 shape)", v2, 1],
  ] as const) {
    it(`a store holding a state saved ${saved} keeps judging its open episode: raised once, ended once`, async () => {
      // The same course on a store that ran the scenario itself, without a restart.
      let control: SpikeAlert[] = [];
      await runInDurableObject(freshStore(), (_store, state) => {
        control = goOn(runScenario(state.storage));
      });
      expect(control.map((alert) => alert.kind)).toEqual(["started", "ended"]);

      await runInDurableObject(freshStore(), (_store, state) => {
        // The row as the code before versions wrote it (its version: the column's default, 1).
        state.storage.sql.exec("INSERT INTO spike_watch (id, body) VALUES (1, ?)", JSON.stringify(fixture));
        const raised = goOn(new AccountTraffic(state.storage));
        const [start] = fixture.outbox;
        const baseline = { ...start?.baseline, days };
        // The start it held, unchanged but for `days`; no second start; its end, as the store that never restarted
        // raised it (with the id and baseline its start had; its sources are those this store saw).
        expect(raised).toEqual([
          { ...start, baseline },
          {
            ...control[1],
            spikeId: start?.spikeId,
            baseline,
            topSources: [expect.objectContaining({ block: "203.0.113.0/24" })],
          },
        ]);
        const row = storedRow(state.storage.sql);
        expect(row.version).toBe(3);
        // Read again (a restart), it is what was written.
        expect(SPIKE_WATCH_STATE.read({ body: JSON.stringify(row.state), version: row.version })).toEqual(row.state);
      });
    });
  }
});

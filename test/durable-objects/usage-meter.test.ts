import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TrafficStore } from "../../src/durable-objects/traffic-store";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { Cell, MeterFigures } from "../../src/durable-objects/traffic-store/contract";
import { DRAIN_MS, SETTLE_INTERVAL_MS, UsageMeter } from "../../src/durable-objects/traffic-store/usage-meter";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const GB = 1_000_000_000;
const T0 = Date.UTC(2026, 10, 24, 12, 0, 0);

const freshStore = () => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(crypto.randomUUID()));

/** A meter in a fresh store's SQLite, started from `figures`. */
function withMeter(figures: Partial<MeterFigures>, run: (meter: UsageMeter, sql: SqlStorage) => void) {
  return runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
    const meter = new UsageMeter(state.storage);
    meter.configure("usr_test", 0, { pools: [], subusers: [], months: [], ...figures });
    run(meter, state.storage.sql);
  });
}

function cell(bytes: number, fields: Partial<Cell> = {}): Cell {
  return {
    minute: T0,
    product: "residential",
    subuserId: "sub_a",
    region: "us",
    asn: 7922,
    tag: "",
    carrier: "",
    ip: "",
    bytesIn: bytes,
    bytesOut: 0,
    requests: 1,
    errors: 0,
    ...fields,
  };
}

const noCaps = { month: null, day: null, lifetime: null };
const monthCap = (bytes: number) => ({ ...noCaps, month: bytes });

const pool = (purchasedGb: number, usedGb = 0) => ({
  product: "residential" as const,
  purchasedBytes: purchasedGb * GB,
  usedBytes: usedGb * GB,
  topUpCount: 1,
});

describe("the usage meter (inside the account's traffic store)", () => {
  it("settles the first usage at once, then at most every 5 minutes, each settlement numbered and frozen until confirmed", async () => {
    expect(SETTLE_INTERVAL_MS).toBe(5 * MINUTE);
    await withMeter({ pools: [pool(100)] }, (meter) => {
      meter.meter([cell(1000)], T0);
      const first = meter.settlement(T0, false);
      // An uncapped sub-user's month is not metered: D1 keeps capped sub-users' months only.
      expect(first).toEqual({ seq: 1, pools: [{ product: "residential", bytes: 1000 }], months: [] });
      // Not confirmed: handed out again, unchanged, while new usage goes to the next one.
      meter.meter([cell(500)], T0);
      expect(meter.settlement(T0 + 1000, false)).toEqual(first);
      expect(meter.confirm(1, { pools: [pool(100)], subusers: [], months: [] }, T0 + 2000)).toBe(false);
      expect(meter.settlement(T0 + 2000 + SETTLE_INTERVAL_MS - 1, false)).toBeNull();
      expect(meter.nextCheck()).toBe(T0 + 2000 + SETTLE_INTERVAL_MS);
      const second = meter.settlement(T0 + 2000 + SETTLE_INTERVAL_MS, false);
      expect(second?.seq).toBe(2);
      expect(second?.pools).toEqual([{ product: "residential", bytes: 500 }]);
      // A confirmation of an older number, or twice, changes nothing.
      expect(meter.confirm(1, { pools: [], subusers: [], months: [] }, T0 + 3000)).toBe(false);
      expect(meter.settlement(T0 + 3000, false)).toEqual(second);
      meter.confirm(2, { pools: [pool(100)], subusers: [], months: [] }, T0 + 4000);
      expect(meter.settlement(T0 + 4000, true)).toBeNull();
      expect(meter.nextCheck()).toBeNull();
    });
  });

  it("asks to settle at once when a pool or a capped sub-user passes 80% or 100% by its figures, once per level", async () => {
    await withMeter(
      {
        pools: [pool(1, 0.5)],
        subusers: [{ subuserId: "sub_capped", caps: monthCap(2 * GB), deletedAt: null }],
        months: [{ subuserId: "sub_capped", month: "2026-11", usedBytes: 0 }],
      },
      (meter) => {
        expect(meter.meter([cell(0.29 * GB)], T0).rises).toBe(false); // 79%
        expect(meter.meter([cell(0.01 * GB)], T0).rises).toBe(true); // 80%
        meter.settlement(T0, true);
        expect(meter.confirm(1, { pools: [pool(1, 0.8)], subusers: [], months: [] }, T0)).toBe(false);
        expect(meter.meter([cell(0.1 * GB)], T0).rises).toBe(false); // 90%: no new level
        expect(meter.meter([cell(0.1 * GB)], T0).rises).toBe(true); // 100%: runs out
        // The capped sub-user's month, and ISP usage (no pool) counting only there: its absolute figure is settled.
        const capped = (bytes: number) => cell(bytes, { subuserId: "sub_capped", product: "isp" });
        expect(meter.meter([capped(1.5 * GB)], T0).rises).toBe(false);
        expect(meter.meter([capped(0.1 * GB)], T0).rises).toBe(true);
        expect(meter.settlement(T0, true)?.months).toEqual([
          { subuserId: "sub_capped", month: "2026-11", usedBytes: 1.6 * GB },
        ]);
        // An uncapped sub-user never asks.
        expect(meter.meter([cell(5 * GB, { product: "isp", subuserId: "sub_free" })], T0).rises).toBe(false);
      },
    );
  });

  it("a top-up it was not told of only makes it settle early: the answer's figures correct it", async () => {
    await withMeter({ pools: [pool(1, 0.95)] }, (meter) => {
      expect(meter.meter([cell(0.1 * GB)], T0).rises).toBe(true); // 105% of the 1 GB it knows
      const settlement = meter.settlement(T0, true);
      // D1 had 10 GB bought meanwhile: 10.5% used.
      expect(meter.confirm(settlement?.seq ?? 0, { pools: [pool(11, 1.05)], subusers: [], months: [] }, T0)).toBe(
        false,
      );
      expect(meter.meter([cell(0.1 * GB)], T0).rises).toBe(false);
      meter.learn({ pools: [pool(10, 0.9)] }); // a late, smaller figure never undoes a newer one
      expect(meter.meter([cell(7.7 * GB)], T0).rises).toBe(true); // 80% of 11 GB
    });
  });

  it("counts a deleted sub-user's usage while its minute began within the drain, and drops and counts the rest per day", async () => {
    await withMeter({ subusers: [{ subuserId: "sub_gone", caps: noCaps, deletedAt: T0 + 30_000 }] }, (meter) => {
      const gone = (minute: number) => cell(100, { subuserId: "sub_gone", minute });
      const cutoff = T0 + 30_000 + DRAIN_MS;
      const cells = [gone(T0), gone(T0 + MINUTE), gone(cutoff - (cutoff % MINUTE) + MINUTE), cell(7)];
      const sample = (ts: number) => ({ subuserId: "sub_gone", ts }) as Parameters<UsageMeter["admit"]>[1][number];
      const admitted = meter.admit(cells, [sample(T0 + 5), sample(T0 + 3 * MINUTE)], T0 + 10 * MINUTE);
      expect(admitted.cells).toEqual([cells[0], cells[1], cells[3]]);
      expect(admitted.samples.map((s) => s.ts)).toEqual([T0 + 5]);
      expect(meter.dropped()).toEqual([{ day: T0 - (T0 % 86_400_000), records: 1, bytes: 100 }]);
    });
  });

  it("meters a sub-user capped later from its month so far (as the rollups count it), settling at once past 80%", async () => {
    await withMeter({ pools: [pool(100)] }, (meter) => {
      meter.meter([cell(0.5 * GB, { subuserId: "sub_b" })], T0);
      expect(meter.settlement(T0, true)?.months).toEqual([]);
      expect(meter.learn({ subusers: [{ subuserId: "sub_b", caps: monthCap(GB), deletedAt: null }] })).toEqual([
        "sub_b",
      ]);
      expect(meter.startPeriods([{ subuserId: "sub_b", period: "2026-11", usedBytes: 0.85 * GB }])).toBe(true);
      meter.meter([cell(0.01 * GB, { subuserId: "sub_b" })], T0);
      expect(meter.confirm(1, { pools: [pool(100, 0.5)], subusers: [], months: [] }, T0)).toBe(true);
      expect(meter.settlement(T0, true)?.months).toEqual([
        { subuserId: "sub_b", month: "2026-11", usedBytes: 0.86 * GB },
      ]);
      // A lower figure never undoes one already metered; a cap removed stops the metering.
      expect(meter.startPeriods([{ subuserId: "sub_b", period: "2026-11", usedBytes: 0.1 * GB }])).toBe(false);
      expect(meter.learn({ subusers: [{ subuserId: "sub_b", caps: noCaps, deletedAt: null }] })).toEqual([]);
    });
  });

  it("keeps its state across restarts: the frozen settlement in its row, the open one in the arrival rows (one row written per ingest, the meter's share in it)", async () => {
    const store = freshStore();
    const ingest = (traffic: AccountTraffic, key: string, bytes: number, at: number) =>
      traffic.ingest(
        {
          accountId: "usr_test",
          parts: [{ key, receivedAt: at, cells: [cell(bytes, { minute: at - (at % MINUTE) })], samples: [] }],
        },
        { pools: [pool(1)], subusers: [], months: [] },
        at,
      );
    await runInDurableObject(store, (_store: TrafficStore, state) => {
      const traffic = new AccountTraffic(state.storage);
      const first = ingest(traffic, "k1", 100, T0);
      expect(first.outcome === "applied" && first.settlement?.pools).toEqual([{ product: "residential", bytes: 100 }]);
      ingest(traffic, "k2", 40, T0 + 1000);
    });
    await runInDurableObject(store, (_store: TrafficStore, state) => {
      const traffic = new AccountTraffic(state.storage);
      // The settlement handed out and not confirmed is handed out again, unchanged.
      expect(traffic.settlement(T0 + 2000)?.pools).toEqual([{ product: "residential", bytes: 100 }]);
      expect(traffic.confirmSettlement(1, { pools: [pool(1, 0)], subusers: [], months: [] }, T0 + 2000)).toBeNull();
      // What was metered after it, in the same minute, before the restart.
      expect(traffic.settlement(T0 + 3000)?.pools).toEqual([{ product: "residential", bytes: 40 }]);
      const outcome = ingest(traffic, "k3", 0.8 * GB, T0 + 4000);
      expect(outcome.outcome === "applied" && outcome.settlement !== null).toBe(true);
    });
  });

  it("meters a sub-user with any cap over its month, UTC day and lifetime, each judged against its own cap", async () => {
    const caps = { month: null, day: GB, lifetime: 10 * GB };
    await withMeter({ subusers: [{ subuserId: "sub_d", caps, deletedAt: null }] }, (meter) => {
      const used = (bytes: number, minute = T0) => cell(bytes, { subuserId: "sub_d", product: "isp", minute });
      expect(meter.meter([used(0.85 * GB)], T0).rises).toBe(true); // 85% of the day
      // Only the period that passed a threshold is settled; the month (no cap) and the lifetime (8.5%) stay open.
      expect(meter.settlement(T0, true)?.months).toEqual([
        { subuserId: "sub_d", month: "2026-11-24", usedBytes: 0.85 * GB },
      ]);
      const day = { subuserId: "sub_d", month: "2026-11-24", usedBytes: 0.85 * GB };
      meter.confirm(1, { pools: [], subusers: [{ subuserId: "sub_d", caps, deletedAt: null }], months: [day] }, T0);
      // The next UTC day starts from nothing; the lifetime goes on.
      const next = T0 + DAY;
      expect(meter.meter([used(0.5 * GB, next)], next).rises).toBe(false);
      const { share, rises } = meter.meter([used(7 * GB, next)], next);
      expect(share?.months).toEqual({
        "sub_d|2026-11": 8.35 * GB,
        "sub_d|2026-11-25": 7.5 * GB,
        "sub_d|lifetime": 8.35 * GB,
      });
      expect(rises).toBe(true);
      expect(meter.settlement(next, true)?.months).toEqual([
        { subuserId: "sub_d", month: "lifetime", usedBytes: 8.35 * GB },
        { subuserId: "sub_d", month: "2026-11-25", usedBytes: 7.5 * GB },
      ]);
    });
  });

  it("forgets the figures of days no longer kept (2 days after theirs); later usage of such a day counts toward its month and lifetime only", async () => {
    const caps = { month: null, day: GB, lifetime: null };
    await withMeter(
      {
        subusers: [{ subuserId: "sub_d", caps, deletedAt: null }],
        months: [{ subuserId: "sub_d", month: "2026-11-24", usedBytes: 0.9 * GB }],
      },
      (meter, sql) => {
        meter.meter([cell(0.1 * GB, { subuserId: "sub_d" })], T0);
        const later = T0 + 3 * DAY;
        meter.prune(later);
        expect(sql.exec("SELECT count(*) AS n FROM meter_months").one().n).toBe(0);
        const { share } = meter.meter([cell(0.1 * GB, { subuserId: "sub_d" })], later);
        expect(Object.keys(share?.months ?? {})).toEqual(["sub_d|2026-11", "sub_d|lifetime"]);
      },
    );
  });

  it("keeps a day's and the lifetime's figures not settled yet across a restart (the arrival rows hold them)", async () => {
    const store = freshStore();
    const caps = { month: null, day: GB, lifetime: 2 * GB };
    const figures = { pools: [pool(100)], subusers: [{ subuserId: "sub_a", caps, deletedAt: null }], months: [] };
    const ingest = (traffic: AccountTraffic, key: string, bytes: number, at: number) =>
      traffic.ingest(
        {
          accountId: "usr_test",
          parts: [{ key, receivedAt: at, cells: [cell(bytes, { minute: at - (at % MINUTE) })], samples: [] }],
        },
        figures,
        at,
      );
    await runInDurableObject(store, (_store: TrafficStore, state) => {
      const traffic = new AccountTraffic(state.storage);
      ingest(traffic, "k1", 0.5 * GB, T0);
      traffic.confirmSettlement(1, { ...figures, pools: [pool(100, 0.5)] }, T0);
      ingest(traffic, "k2", 0.2 * GB, T0 + 1000);
    });
    await runInDurableObject(store, (_store: TrafficStore, state) => {
      const traffic = new AccountTraffic(state.storage);
      expect(traffic.periodUsage(["sub_a"], T0 + 2000)).toEqual({
        sub_a: { month: 0.7 * GB, day: 0.7 * GB, lifetime: 0.7 * GB },
      });
      const outcome = ingest(traffic, "k3", 0.15 * GB, T0 + 2000);
      expect(outcome.outcome === "applied" && outcome.settlement?.months).toEqual([
        { subuserId: "sub_a", month: "2026-11-24", usedBytes: 0.85 * GB },
      ]);
    });
  });

  it("takes the daily and lifetime caps' columns on a meter of the earlier form: its monthly caps stand, and a cap gained later starts from the rollups", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const sql = state.storage.sql;
      // The meter as step 3 left it, with a sub-user capped monthly.
      sql.exec("DROP TABLE meter_subusers");
      sql.exec(
        "CREATE TABLE meter_subusers (subuser TEXT PRIMARY KEY, cap_bytes INTEGER, deleted_at INTEGER) WITHOUT ROWID",
      );
      sql.exec("INSERT INTO meter_subusers VALUES ('sub_m', ?, NULL)", GB);
      sql.exec("UPDATE _storage_versions SET version = 3 WHERE area = 'usage_meter'");
      sql.exec("INSERT INTO meter (id, account_id, prepared, settled) VALUES (1, 'usr_test', 0, 0)");
      const meter = new UsageMeter(state.storage);
      expect(meter.meter([cell(0.85 * GB, { subuserId: "sub_m" })], T0).rises).toBe(true);
      // Unchanged caps are not news; a daily cap is, and its day starts from what the rollups counted.
      const subuser = (day: number | null) => ({ subuserId: "sub_m", caps: { month: GB, day, lifetime: null } });
      expect(meter.learn({ subusers: [{ ...subuser(null), deletedAt: null }] })).toEqual([]);
      expect(meter.learn({ subusers: [{ ...subuser(GB), deletedAt: null }] })).toEqual(["sub_m"]);
      expect(meter.startPeriods([{ subuserId: "sub_m", period: "2026-11-24", usedBytes: 0.9 * GB }])).toBe(true);
    });
  });
});

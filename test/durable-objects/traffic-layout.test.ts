import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { random } from "../../bench/scale/fleet";
import { alignRange, resolutionFor } from "../../src/domain/traffic/resolution";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { Cell, GroupBy, TrafficQuery, TrafficRow } from "../../src/durable-objects/traffic-store/contract";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 5, 1, 0, 0, 0);
const FIGURES = { pools: [], subusers: [], months: [] };

const pick = <T>(rng: () => number, values: T[]): T => values[Math.floor(rng() * values.length)] as T;

function randomCell(rng: () => number, minute: number): Cell {
  return {
    minute,
    product: pick(rng, ["residential", "residential", "mobile", "isp"] as const),
    subuserId: pick(rng, ["sub_a", "sub_b", "sub_c"]),
    region: pick(rng, ["us", "de", "fr"]),
    asn: pick(rng, [7922, 3320, 701]),
    tag: pick(rng, ["", "", "checkout", "search"]),
    carrier: "",
    ip: pick(rng, ["", "192.0.2.1", "192.0.2.2"]),
    bytesIn: 1 + Math.floor(rng() * 10_000),
    bytesOut: Math.floor(rng() * 1_000),
    requests: 1 + Math.floor(rng() * 5),
    errors: Math.floor(rng() * 2),
  };
}

/** What every answer must hold: the cells summed straight from the reference. */
function expected(cells: Cell[], query: TrafficQuery, span: number | null): Map<unknown, number[]> {
  const sums = new Map<unknown, number[]>();
  for (const cell of cells) {
    if (cell.product !== query.product || cell.minute < query.from || cell.minute >= query.to) continue;
    const { subuserIds, region, tag } = query.filters;
    if ((subuserIds && !subuserIds.includes(cell.subuserId)) || (region && cell.region !== region)) continue;
    if (tag && cell.tag !== tag) continue;
    const key =
      span !== null
        ? cell.minute - (cell.minute % span)
        : query.groupBy === null
          ? null
          : query.groupBy === "subuser"
            ? cell.subuserId
            : query.groupBy === "asn"
              ? cell.asn
              : (cell[query.groupBy as "region" | "tag" | "ip"] as string);
    const known = sums.get(key) ?? [0, 0, 0, 0];
    known[0] = (known[0] as number) + cell.bytesIn;
    known[1] = (known[1] as number) + cell.bytesOut;
    known[2] = (known[2] as number) + cell.requests;
    known[3] = (known[3] as number) + cell.errors;
    sums.set(key, known);
  }
  return sums;
}

function answered(rows: TrafficRow[]): Map<unknown, number[]> {
  return new Map(
    rows
      .filter((row) => row.requests > 0 || row.bytesIn > 0 || row.bytesOut > 0)
      .map((row) => [row.key, [row.bytesIn, row.bytesOut, row.requests, row.errors]]),
  );
}

function spanOf(groupBy: GroupBy | null, resolution: TrafficQuery["resolution"]): number | null {
  if (groupBy !== "day" && groupBy !== "hour") return null;
  const unit = { "1m": MINUTE, "5m": 5 * MINUTE, "1h": HOUR, "1d": DAY }[resolution];
  return Math.max(groupBy === "day" ? DAY : HOUR, unit);
}

describe("the store's layout (rows per account-minute): every answer is exact", () => {
  it("answers every group and filter like the sum of the cells, across folds, late usage and restarts", async () => {
    const stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName("layout-reference"));
    await runInDurableObject(stub, (_instance, state) => {
      const rng = random(7);
      let traffic = new AccountTraffic(state.storage);
      const cells: Cell[] = [];
      let checks = 0;
      const check = (at: number) => {
        for (let q = 0; q < 12; q++) {
          const width = pick(rng, [10 * MINUTE, 3 * HOUR, DAY, 5 * DAY, 30 * DAY]);
          const to0 = at + MINUTE - Math.floor(rng() * Math.min(width, 20 * DAY));
          const resolution = resolutionFor(to0 - width, at);
          const range = alignRange(to0 - width, to0, resolution);
          const groupBy = pick(rng, [
            null,
            "subuser",
            "region",
            "asn",
            "tag",
            "ip",
            "hour",
            "day",
          ] as Array<GroupBy | null>);
          const filters = pick(rng, [
            {},
            {},
            { subuserIds: ["sub_a"] },
            { subuserIds: ["sub_a", "sub_b"] },
            { region: "de" },
            { tag: "checkout" },
          ]);
          const query: TrafficQuery = {
            product: pick(rng, ["residential", "mobile", "isp"] as const),
            ...range,
            resolution,
            groupBy,
            filters,
          };
          const span = spanOf(groupBy, resolution);
          const want = expected(cells, query, span);
          const got = answered(traffic.traffic(query));
          if (groupBy === null && want.size === 0) want.set(null, [0, 0, 0, 0]);
          if (groupBy === null) got.set(null, got.get(null) ?? [0, 0, 0, 0]);
          expect(got, `${JSON.stringify(query)} at ${new Date(at).toISOString()}`).toEqual(want);
          checks++;
        }
      };
      let at = T0;
      let part = 0;
      for (let step = 0; step < 400; step++) {
        at += Math.floor(rng() * 40 * MINUTE);
        const fresh = Array.from({ length: 1 + Math.floor(rng() * 6) }, () => {
          const lateness = rng() < 0.8 ? rng() * 2 * MINUTE : rng() < 0.7 ? rng() * 3 * HOUR : rng() * 30 * HOUR;
          const ts = at - lateness;
          return randomCell(rng, ts - (ts % MINUTE));
        });
        const key = `batch-${part++}:usr_x:0`;
        traffic.ingest(
          { accountId: "usr_x", parts: [{ key, receivedAt: at, cells: fresh, samples: [] }] },
          FIGURES,
          at,
        );
        // The same part again (a redelivery, a racing copy) counts nothing.
        traffic.ingest(
          { accountId: "usr_x", parts: [{ key, receivedAt: at, cells: fresh, samples: [] }] },
          FIGURES,
          at,
        );
        cells.push(...fresh);
        const wake = traffic.nextWake();
        if (wake !== null && wake <= at) traffic.maintain(at);
        if (rng() < 0.05) traffic = new AccountTraffic(state.storage);
        if (step % 40 === 39) check(at);
      }
      // A quiet week: everything folds into hours and days, and still answers the same.
      at += 7 * DAY;
      traffic.maintain(at);
      check(at);
      expect(checks).toBeGreaterThan(100);
    });
  }, 120_000);

  it("folds weeks of usage taken at once (a history posted into a new store) without losing a bucket to the rings", async () => {
    const stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName("layout-backfill"));
    await runInDurableObject(stub, (_instance, state) => {
      const rng = random(11);
      const traffic = new AccountTraffic(state.storage);
      const at = T0 + 60 * DAY;
      // One cell every 17 minutes over 50 days: more 5-minute buckets than the ring's 14 days of slots.
      const cells = Array.from({ length: Math.floor((50 * DAY) / (17 * MINUTE)) }, (_, i) => {
        const minute = at - 50 * DAY + i * 17 * MINUTE;
        return { ...randomCell(rng, minute - (minute % MINUTE)), product: "residential" as const };
      });
      traffic.ingest(
        { accountId: "usr_x", parts: [{ key: "history", receivedAt: at, cells, samples: [] }] },
        FIGURES,
        at,
      );
      const started = performance.now();
      traffic.maintain(at);
      expect(performance.now() - started).toBeLessThan(20_000);
      const query: TrafficQuery = {
        product: "residential",
        from: at - 50 * DAY - (at % HOUR),
        to: at + HOUR,
        resolution: "1h",
        groupBy: "day",
        filters: {},
      };
      expect(answered(traffic.traffic(query))).toEqual(expected(cells, query, DAY));
      expect(answered(traffic.traffic({ ...query, groupBy: "subuser" }))).toEqual(
        expected(cells, { ...query, groupBy: "subuser" }, null),
      );
    });
  }, 60_000);

  it("keeps a minute's body past a row's 2 MB in pages (a backfill of many sub-users in one minute), read back exactly after a restart", async () => {
    const stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName("layout-paged"));
    await runInDurableObject(stub, (_instance, state) => {
      const rng = random(13);
      let traffic = new AccountTraffic(state.storage);
      const at = T0 + 10 * DAY;
      // 150,000 distinct cells (a sub-user each, a minute of each of ten days): a compressed body of over 2 MB.
      const cells = Array.from({ length: 150_000 }, (_, i) => {
        const minute = at - 10 * DAY + (i % 10) * DAY;
        return { ...randomCell(rng, minute), product: "residential" as const, subuserId: `sub_${i}` };
      });
      const ingest = (key: string, part: Cell[]) =>
        traffic.ingest({ accountId: "usr_x", parts: [{ key, receivedAt: at, cells: part, samples: [] }] }, FIGURES, at);
      ingest("history-0", cells.slice(0, 75_000));
      ingest("history-1", cells.slice(75_000));
      const pages = () => state.storage.sql.exec("SELECT count(*) AS n FROM arrival_pages").one().n as number;
      expect(pages()).toBeGreaterThan(2);
      const query: TrafficQuery = {
        product: "residential",
        from: at - 10 * DAY,
        to: at + MINUTE,
        resolution: "1h",
        groupBy: "day",
        filters: {},
      };
      const want = expected(cells, query, DAY);
      expect(answered(traffic.traffic(query))).toEqual(want);
      traffic = new AccountTraffic(state.storage);
      expect(answered(traffic.traffic(query))).toEqual(want);
      // A part applied in the paged row is still recognised.
      expect(ingest("history-1", cells.slice(75_000))).toMatchObject({ outcome: "applied", applied: 0 });
      // A day later its slot is overwritten by a small row: the pages go with it.
      const later = at + 25 * HOUR;
      const small = { ...randomCell(rng, later), product: "residential" as const };
      cells.push(small);
      traffic.ingest(
        { accountId: "usr_x", parts: [{ key: "small", receivedAt: later, cells: [small], samples: [] }] },
        FIGURES,
        later,
      );
      traffic.maintain(later);
      expect(pages()).toBe(0);
      expect(answered(traffic.traffic({ ...query, to: later + MINUTE }))).toEqual(
        expected(cells, { ...query, to: later + MINUTE }, DAY),
      );
    });
  }, 120_000);
});

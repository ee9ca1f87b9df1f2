import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Rollups } from "../../durable-objects/traffic-rollups";
import type { TrafficStore } from "../../durable-objects/traffic-store";

const HOUR = 3_600_000;

function freshStore() {
  return env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`rollups-${crypto.randomUUID()}`));
}

const totalOf = (rollups: Rollups, from: number, to: number, at: number) =>
  rollups.query({ product: "residential", from, to, resolution: "1h", groupBy: null, filters: {} }, at)[0];

describe("Rollups (a traffic store's tiers)", () => {
  it("counts a store's old keyed pending deltas once when the heap replaces it: they were in fact_1m already", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const sql = state.storage.sql;
      const at = Date.UTC(2026, 10, 23, 12, 0, 0);
      const minute = at - 2 * HOUR;
      // The layout before: ingest wrote each delta to fact_1m and to a keyed pending table.
      sql.exec("DROP TABLE pending");
      sql.exec(`CREATE TABLE pending (bucket INTEGER NOT NULL, product TEXT NOT NULL, subuser TEXT NOT NULL,
        region TEXT NOT NULL, asn INTEGER NOT NULL, tag TEXT NOT NULL, carrier TEXT NOT NULL, ip TEXT NOT NULL,
        bytes_in INTEGER NOT NULL, bytes_out INTEGER NOT NULL, requests INTEGER NOT NULL, errors INTEGER NOT NULL,
        PRIMARY KEY (bucket, product, subuser, region, asn, tag, carrier, ip)) WITHOUT ROWID`);
      for (const table of ["fact_1m", "pending"]) {
        sql.exec(
          `INSERT INTO ${table} VALUES (?, 'residential', 'sub_a', 'us', 7922, '', '', '', 1000, 100, 3, 1)`,
          minute,
        );
      }

      const rollups = new Rollups(sql);
      const heap = sql.exec<{ sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'pending'").one().sql;
      expect(heap).not.toContain("WITHOUT ROWID");
      expect(sql.exec("SELECT count(*) AS n FROM pending").one().n).toBe(0);
      const expected = { bytesIn: 1000, bytesOut: 100, requests: 3, errors: 1 };
      expect(totalOf(rollups, at - 3 * HOUR, at, at)).toMatchObject(expected);
      // A fold later changes nothing: the deltas are in every tier exactly once.
      rollups.fold(at);
      expect(totalOf(rollups, at - 3 * HOUR, at, at)).toMatchObject(expected);
      expect(sql.exec("SELECT sum(requests) AS n FROM fact_1m").one().n).toBe(3);
      expect(sql.exec("SELECT sum(requests) AS n FROM fact_5m").one().n).toBe(3);
    });
  });

  it("reads appended deltas before the fold, and the same totals after it", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const rollups = new Rollups(state.storage.sql);
      const at = Date.UTC(2026, 10, 23, 12, 30, 0);
      const cell = (minute: number, requests: number) => ({
        minute,
        product: "residential" as const,
        subuserId: "sub_a",
        region: "us",
        asn: 7922,
        tag: "",
        carrier: "",
        ip: "",
        bytesIn: 10 * requests,
        bytesOut: requests,
        requests,
        errors: 0,
      });
      // The same minute and dimensions twice (two messages): two pending rows, one fact_1m row once folded.
      expect(rollups.ingest([cell(at - 10 * 60_000, 2), cell(at - 90 * 60_000, 5)])).toBe(2);
      expect(rollups.ingest([cell(at - 10 * 60_000, 4)])).toBe(1);
      expect(rollups.requestsInMinute(at - 10 * 60_000)).toBe(6);
      const before = totalOf(rollups, at - 2 * HOUR, at, at);
      expect(before).toMatchObject({ requests: 11, bytesIn: 110, bytesOut: 11 });
      rollups.fold(at);
      expect(totalOf(rollups, at - 2 * HOUR, at, at)).toEqual(before);
      const rows = state.storage.sql.exec("SELECT count(*) AS n FROM fact_1m").one().n;
      expect(rows).toBe(2);
    });
  });
});

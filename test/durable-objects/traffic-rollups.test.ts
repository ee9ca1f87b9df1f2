import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { TrafficStore } from "../../src/durable-objects/traffic-store";
import type { Cell, GroupBy, TrafficRow } from "../../src/durable-objects/traffic-store/contract";
import { TrafficReports } from "../../src/durable-objects/traffic-store/traffic-reports";
import { Rollups } from "../../src/durable-objects/traffic-store/traffic-rollups";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function freshStore() {
  return env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`rollups-${crypto.randomUUID()}`));
}

const totalOf = (rollups: Rollups, from: number, to: number, at: number) =>
  rollups.query({ product: "residential", from, to, resolution: "1h", groupBy: null, filters: {} }, at)[0];

const perSubuser = (rollups: Rollups, from: number, to: number, at: number) =>
  rollups.query({ product: "residential", from, to, resolution: "1h", groupBy: "subuser", filters: {} }, at);

function cellAt(minute: number, subuserId: string, requests: number, dims: Partial<Cell> = {}): Cell {
  return {
    minute,
    product: "residential",
    subuserId,
    region: "us",
    asn: 7922,
    tag: "",
    carrier: "",
    ip: "",
    bytesIn: 100 * requests,
    bytesOut: 10 * requests,
    requests,
    errors: 0,
    ...dims,
  };
}

/** What a group_by=subuser query over [from, to) must answer: the cells' sums, per sub-user with usage. */
function expectedPerSubuser(cells: Cell[], from: number, to: number) {
  const sums = new Map<string, { key: string; bytesIn: number; bytesOut: number; requests: number; errors: number }>();
  for (const cell of cells.filter((c) => c.minute >= from && c.minute < to)) {
    const row = sums.get(cell.subuserId) ?? { key: cell.subuserId, bytesIn: 0, bytesOut: 0, requests: 0, errors: 0 };
    row.bytesIn += cell.bytesIn;
    row.bytesOut += cell.bytesOut;
    row.requests += cell.requests;
    sums.set(cell.subuserId, row);
  }
  return [...sums.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

/** A SqlStorage that records every statement (with its parameters) run through it. */
function recording(sql: SqlStorage): { sql: SqlStorage; statements: Array<{ query: string; params: unknown[] }> } {
  const statements: Array<{ query: string; params: unknown[] }> = [];
  const exec = (query: string, ...params: SqlStorageValue[]) => {
    statements.push({ query, params });
    return sql.exec(query, ...params);
  };
  return {
    sql: new Proxy(sql, { get: (target, key) => (key === "exec" ? exec : Reflect.get(target, key)) }),
    statements,
  };
}

describe("Rollups (a traffic store's tiers)", () => {
  it("reads a tier's time range on its primary key unless a sub-user is named: never every row of a product through the sub-user index", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const { sql, statements } = recording(state.storage.sql);
      const rollups = new Rollups({ sql, transactionSync: (closure) => state.storage.transactionSync(closure) });
      const reports = new TrafficReports(sql);
      const at = Date.UTC(2026, 10, 23, 12, 58, 0);
      const cells = [0, 1, 2, 3].flatMap((day) => [
        cellAt(at - day * DAY - 30 * 60_000, "sub_a", 2),
        cellAt(at - day * DAY - 3 * HOUR, "sub_b", 1),
      ]);
      rollups.ingest(cells);
      rollups.fold(at);
      statements.length = 0;
      // A 24 h range read a little later: `from`'s partial hour is past fact_1m's horizon, so fact_5m answers it.
      const later = at + 2 * 60_000;
      const query = (groupBy: GroupBy | null, filters: Record<string, string>, resolution: "1m" | "5m" | "1h") =>
        rollups.query(
          { product: "residential", from: later - DAY - 5 * 60_000, to: later, resolution, groupBy, filters },
          later,
        );
      expect(query("hour", {}, "5m").reduce((sum, row) => sum + row.requests, 0)).toBe(3);
      query(null, { region: "us" }, "5m");
      query("subuser", { tag: "" }, "1h");
      query(null, { subuserId: "sub_a" }, "5m");
      reports.trafficDays({ from: at - 3 * DAY, to: at, products: ["residential"], subuserIds: null }, null, 100, at);
      reports.trafficDays(
        { from: at - 3 * DAY, to: at, products: ["residential"], subuserIds: ["sub_a"] },
        null,
        100,
        at,
      );

      // Every read of a tier that has the sub-user index: a sub-user named seeks it, else the time range on the key.
      const tierReads = statements.filter(({ query }) => /FROM (fact_5m|fact_1h|fact_1d)\b/.test(query));
      expect(tierReads.length).toBe(12);
      for (const { query, params } of tierReads) {
        const plan = state.storage.sql
          .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`, ...(params as SqlStorageValue[]))
          .toArray()
          .map((row) => row.detail)
          .filter((detail) => /fact_(5m|1h|1d)/.test(detail))
          .join("; ");
        const subuserNamed = /subuser (=|IN) /.test(query);
        expect(plan, query).toMatch(
          subuserNamed ? /_subuser \(product=\? AND subuser=\?/ : /USING PRIMARY KEY \(bucket>\? AND bucket<\?\)/,
        );
        expect(plan, query).not.toMatch(/SCAN fact_|_subuser \(product=\?\)/);
      }
    });
  });

  it("counts a store's old keyed pending deltas once when the heap replaces it: they were in fact_1m already", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const sql = state.storage.sql;
      const at = Date.UTC(2026, 10, 23, 12, 0, 0);
      const minute = at - 2 * HOUR;
      // The layout before: ingest wrote each delta to fact_1m and to a keyed pending table (and storage had no
      // versions yet).
      sql.exec("DELETE FROM _storage_versions WHERE area = 'rollups'");
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

      const rollups = new Rollups(state.storage);
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
      const rollups = new Rollups(state.storage);
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

  it("answers every hour-aligned range exactly, whether a boundary falls before a series' first row, after its newest, or in between (and after late usage moves a first row earlier)", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const rollups = new Rollups(state.storage);
      const at = Date.UTC(2026, 10, 23, 12, 0, 0);
      const start = at - 5 * DAY;
      // sub_a from the first day, sub_b from the third, sub_c only in the last hours.
      const cells: Cell[] = [];
      for (let hour = 0; hour < 5 * 24; hour += 7)
        cells.push(cellAt(start + hour * HOUR + 60_000, "sub_a", 1 + (hour % 5)));
      for (let hour = 48; hour < 5 * 24; hour += 11) cells.push(cellAt(start + hour * HOUR, "sub_b", 2));
      cells.push(cellAt(at - 3 * HOUR, "sub_c", 7), cellAt(at - HOUR + 59 * 60_000, "sub_c", 1));
      rollups.ingest(cells);
      rollups.fold(at);
      // Late usage: sub_b gains an hour before its first row, sub_a one in the middle.
      const late = [cellAt(start + 30 * HOUR, "sub_b", 3), cellAt(start + 61 * HOUR, "sub_a", 4)];
      rollups.ingest(late);
      rollups.fold(at);
      cells.push(...late);

      const hours = [0, 1, 29, 30, 31, 47, 48, 60, 61, 62, 100, 117, 118, 119, 120, 121].map((h) => start + h * HOUR);
      for (const from of hours) {
        for (const to of hours.filter((t) => t > from)) {
          const answer = perSubuser(rollups, from, to, at).map(({ carrierName: _, ...row }: TrafficRow) => row);
          expect(answer, `[${(from - start) / HOUR} h, ${(to - start) / HOUR} h)`).toEqual(
            expectedPerSubuser(cells, from, to),
          );
        }
      }
    });
  });

  it("fills cum_last from cum once when it replaces a store's cum_series, and answers the same", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const sql = state.storage.sql;
      const at = Date.UTC(2026, 10, 23, 12, 0, 0);
      const rollups = new Rollups(state.storage);
      const cells = [
        cellAt(at - 3 * DAY, "sub_a", 2),
        cellAt(at - 2 * DAY, "sub_a", 3),
        cellAt(at - DAY, "sub_b", 5),
        cellAt(at - 2 * HOUR, "sub_b", 1),
      ];
      rollups.ingest(cells);
      rollups.fold(at);
      const ranges = [
        [at - 4 * DAY, at],
        [at - 2 * DAY - HOUR, at],
        [at - 3 * DAY, at - DAY],
      ] as const;
      const before = ranges.map(([from, to]) => perSubuser(rollups, from, to, at));
      // The layout before: a list of series without their rows (and storage had no versions yet).
      sql.exec("DELETE FROM _storage_versions WHERE area = 'rollups'");
      sql.exec("DROP TABLE cum_last");
      sql.exec(`CREATE TABLE cum_series (product TEXT NOT NULL, dim TEXT NOT NULL, value TEXT NOT NULL,
        PRIMARY KEY (product, dim, value)) WITHOUT ROWID`);
      sql.exec("INSERT INTO cum_series SELECT DISTINCT product, dim, value FROM cum");

      const migrated = new Rollups(state.storage);
      const tables = sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").toArray();
      expect(tables.map((t) => t.name)).not.toContain("cum_series");
      const subA = sql
        .exec("SELECT first_hour, hour, requests FROM cum_last WHERE dim = 'subuser' AND value = 'sub_a'")
        .one();
      expect(subA).toEqual({ first_hour: at - 3 * DAY, hour: at - 2 * DAY, requests: 5 });
      expect(ranges.map(([from, to]) => perSubuser(migrated, from, to, at))).toEqual(before);
      expect(before[1]).toMatchObject([
        { key: "sub_a", requests: 3 },
        { key: "sub_b", requests: 6 },
      ]);
    });
  });

  it("orders grouped rows as the filtered path's ORDER BY does: text by code unit, ASNs numerically", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const rollups = new Rollups(state.storage);
      const at = Date.UTC(2026, 10, 23, 12, 0, 0);
      const dims = [
        { tag: "a_1", asn: 80 },
        { tag: "a-1", asn: 7922 },
        { tag: "a1", asn: 100 },
      ];
      rollups.ingest(dims.map((d) => cellAt(at - 2 * HOUR, "sub_a", 1, d)));
      rollups.fold(at);
      const keys = (groupBy: GroupBy, filters: { region?: string }) =>
        rollups
          .query({ product: "residential", from: at - DAY, to: at, resolution: "1h", groupBy, filters }, at)
          .map((row) => row.key);
      for (const filters of [{}, { region: "us" }]) {
        expect(keys("tag", filters)).toEqual(["a-1", "a1", "a_1"]);
        expect(keys("asn", filters)).toEqual([80, 100, 7922]);
      }
    });
  });
});

import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { TrafficQuery, TrafficRow } from "../../src/durable-objects/traffic-store/contract";
import fixture from "../fixtures/legacy-traffic-store.json";

/**
 * A store of the earlier layout (a row per cell and tier, per log entry, per part key, per source and session): the
 * fixture is what the store's code before the layout step wrote for three days of usage folded as it arrived, a
 * few minutes still pending, request-log entries, client sources, two sessions, a settlement handed out and not
 * confirmed and usage metered after it (tables and rows, dumped from that code).
 */
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const AT = fixture.at;
type FixtureCell = [number, string, string, string, number, number, number, number];

afterEach(() => vi.useRealTimers());

/** Replaces a store's storage by the fixture's tables and rows. */
function loadFixture(sql: SqlStorage): void {
  const existing = sql
    .exec<{ name: string; type: string }>(
      "SELECT name, type FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'sqlite_%'",
    )
    .toArray();
  for (const { name } of existing) sql.exec(`DROP TABLE "${name}"`);
  for (const table of fixture.tables) sql.exec(table.sql);
  for (const table of fixture.tables) {
    for (const row of table.rows) {
      sql.exec(
        `INSERT INTO "${table.name}" (${table.columns.join(", ")}) VALUES (${table.columns.map(() => "?").join(", ")})`,
        ...(row as SqlStorageValue[]),
      );
    }
  }
}

function sums(rows: TrafficRow[]): Map<unknown, number[]> {
  return new Map(rows.map((row) => [row.key, [row.bytesIn, row.bytesOut, row.requests, row.errors]]));
}

function expected(from: number, to: number, key: (cell: FixtureCell) => unknown): Map<unknown, number[]> {
  const out = new Map<unknown, number[]>();
  for (const cell of fixture.cells as FixtureCell[]) {
    if (cell[0] < from || cell[0] >= to) continue;
    const k = key(cell);
    const known = out.get(k) ?? [0, 0, 0, 0];
    known[0] = (known[0] as number) + cell[4];
    known[1] = (known[1] as number) + cell[5];
    known[2] = (known[2] as number) + cell[6];
    known[3] = (known[3] as number) + cell[7];
    out.set(k, known);
  }
  return out;
}

describe("the layout step: a store of the earlier layout moves over", () => {
  it("answers the same traffic, request log, sources, sessions, part keys and settlements, and drops the old tables", async () => {
    const stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`legacy-${crypto.randomUUID()}`));
    await runInDurableObject(stub, (_store, state) => {
      loadFixture(state.storage.sql);
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(AT + MINUTE);
      const traffic = new AccountTraffic(state.storage);
      const versions = state.storage.sql
        .exec<{ area: string; version: number }>("SELECT area, version FROM _storage_versions ORDER BY area")
        .toArray();
      expect(versions).toEqual([
        { area: "traffic_layout", version: 4 },
        { area: "usage_meter", version: 4 },
      ]);
      const tables = state.storage.sql
        .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
        .toArray()
        .map((row) => row.name);
      for (const old of ["fact_1m", "fact_5m", "pending", "cum", "request_log", "usage_applied", "meter_deltas"]) {
        expect(tables).not.toContain(old);
      }

      const query = (
        from: number,
        to: number,
        groupBy: TrafficQuery["groupBy"],
        resolution: TrafficQuery["resolution"],
      ) => sums(traffic.traffic({ product: "residential", from, to, resolution, groupBy, filters: {} }));
      const check = () => {
        const start = AT - 3 * 24 * HOUR;
        const end = AT + HOUR;
        expect(query(start, end, "subuser", "1h")).toEqual(expected(start, end, (c) => c[1]));
        expect(query(start, end, "region", "1h")).toEqual(expected(start, end, (c) => c[2]));
        expect(query(start, end, "hour", "1h")).toEqual(expected(start, end, (c) => c[0] - (c[0] % HOUR)));
        const recent = AT - 20 * HOUR;
        expect(query(recent, end, "tag", "1m")).toEqual(expected(recent, end, (c) => c[3]));
        expect(query(AT - 2 * HOUR - 7 * MINUTE, AT + MINUTE, null, "1m")).toEqual(
          expected(AT - 2 * HOUR - 7 * MINUTE, AT + MINUTE, () => null),
        );
      };
      check();

      expect(traffic.requests({ product: "residential", limit: 100 }, AT + MINUTE).map((s) => s.requestId)).toEqual([
        "req_legacy2",
        "req_legacy1",
        "req_legacy0",
      ]);
      expect(
        traffic
          .clientSources("sub_a", null, 10, AT + MINUTE)
          .map((s) => s.block)
          .sort(),
      ).toEqual(["198.51.0.0/24", "198.51.1.0/24", "198.51.2.0/24"]);
      const sessions = traffic.listSessions({ product: "residential", limit: 10 }, AT + MINUTE);
      expect(sessions.map((s) => [s.id, s.status, s.bytesUsed, s.requests])).toEqual([
        ["ses_01JD000000000000000000000B", "terminated", 4040, 4],
        ["ses_01JD000000000000000000000A", "active", 4040, 4],
      ]);

      // Parts applied before the move (their keys in the old `usage_applied`, a day's worth) count nothing again.
      const applied = fixture.tables.find((t) => t.name === "usage_applied")?.rows as Array<[string, number]>;
      expect(applied.length).toBeGreaterThan(10);
      const again = traffic.ingest(
        {
          accountId: "usr_legacy",
          parts: applied.map(([key, at]) => ({ key, receivedAt: at, cells: [], samples: [] })),
        },
        undefined,
        AT + MINUTE,
      );
      expect(again).toMatchObject({ outcome: "applied", applied: 0 });

      // The settlement handed out before the move is handed out unchanged; what was metered after it comes next.
      const frozen = traffic.settlement(AT + MINUTE);
      const meter = fixture.tables.find((t) => t.name === "meter");
      expect(frozen?.seq).toBe(meter?.rows[0]?.[meter.columns.indexOf("prepared")]);
      expect(frozen?.seq).toBeGreaterThan(0);
      const deltas = fixture.tables.find((t) => t.name === "meter_deltas");
      const open = deltas?.rows.find((row) => row[0] === (frozen?.seq ?? 0) + 1);
      const openPools = JSON.parse(String(open?.[deltas?.columns.indexOf("pools") ?? 0]));
      expect(openPools.residential).toBeGreaterThan(0);
      traffic.confirmSettlement(frozen?.seq ?? 0, { pools: [], subusers: [], months: [] }, AT + MINUTE);
      expect(traffic.settlement(AT + MINUTE)?.pools).toEqual([
        { product: "residential", bytes: openPools.residential },
      ]);

      // Folded in the new layout, it answers the same.
      traffic.maintain(AT + 2 * HOUR);
      check();
    });
  });
});

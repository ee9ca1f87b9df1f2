import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ApiKeyGuard } from "../../src/durable-objects/api-key-guard";
import { type AreaStorage, migrate, type StorageStep } from "../../src/durable-objects/shared/storage-versions";
import type { SubuserGate } from "../../src/durable-objects/subuser-gate";
import type { TrafficStore } from "../../src/durable-objects/traffic-store";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";

function freshStore() {
  return env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(`versions-${crypto.randomUUID()}`));
}

/** The object's storage with every statement run through it recorded. */
function recording(storage: DurableObjectStorage): { storage: AreaStorage; statements: string[] } {
  const statements: string[] = [];
  const exec = (query: string, ...params: SqlStorageValue[]) => {
    statements.push(query);
    return storage.sql.exec(query, ...params);
  };
  const sql = new Proxy(storage.sql, {
    get: (target, key) => (key === "exec" ? exec : Reflect.get(target, key)),
  });
  return { storage: { sql, transactionSync: (closure) => storage.transactionSync(closure) }, statements };
}

const versionsOf = (sql: SqlStorage) =>
  Object.fromEntries(
    sql
      .exec<{ area: string; version: number }>("SELECT area, version FROM _storage_versions ORDER BY area")
      .toArray()
      .map((row) => [row.area, row.version]),
  );

const tableNames = (sql: SqlStorage) =>
  sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .toArray()
    .map((row) => row.name);

const DDL = /\b(CREATE|ALTER|DROP|PRAGMA)\b/i;

describe("storage versions (migrate)", () => {
  it("applies an area's steps in order on fresh storage, each once, and records the area's version", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const ran: number[] = [];
      const steps: StorageStep[] = [1, 2, 3].map((n) => (sql) => {
        ran.push(n);
        sql.exec(`CREATE TABLE probe_${n} (id INTEGER PRIMARY KEY)`);
        // Each step sees the one before it applied.
        if (n > 1) sql.exec(`INSERT INTO probe_${n - 1} (id) VALUES (${n})`);
      });
      expect(migrate(state.storage, "probe", steps)).toBe(0);
      expect(ran).toEqual([1, 2, 3]);
      expect(versionsOf(state.storage.sql).probe).toBe(3);
      expect(state.storage.sql.exec("SELECT id FROM probe_2").one().id).toBe(3);
    });
  });

  it("runs no step and no DDL when the area is at its version (one read); a step appended later runs alone", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const ran: number[] = [];
      const step = (n: number) => (sql: SqlStorage) => {
        ran.push(n);
        sql.exec(`CREATE TABLE IF NOT EXISTS probe_${n} (id INTEGER PRIMARY KEY)`);
      };
      migrate(state.storage, "probe", [step(1), step(2)]);
      ran.length = 0;

      const restart = recording(state.storage);
      expect(migrate(restart.storage, "probe", [step(1), step(2)])).toBe(2);
      expect(ran).toEqual([]);
      expect(restart.statements).toEqual(["SELECT version FROM _storage_versions WHERE area = ?"]);

      expect(migrate(state.storage, "probe", [step(1), step(2), step(3)])).toBe(2);
      expect(ran).toEqual([3]);
      expect(versionsOf(state.storage.sql).probe).toBe(3);
    });
  });

  it("rolls a failing step back with its version, so the next start runs it again", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      const sql = state.storage.sql;
      const good: StorageStep = (s) => s.exec("CREATE TABLE probe_good (id INTEGER PRIMARY KEY)");
      const failing: StorageStep = (s) => {
        s.exec("CREATE TABLE probe_half (id INTEGER PRIMARY KEY)");
        throw new Error("step failed half-way");
      };
      expect(() => migrate(state.storage, "probe", [good, failing])).toThrow("step failed half-way");
      expect(versionsOf(sql).probe).toBe(1);
      expect(tableNames(sql)).toContain("probe_good");
      expect(tableNames(sql)).not.toContain("probe_half");

      const fixed: StorageStep = (s) => s.exec("CREATE TABLE probe_half (id INTEGER PRIMARY KEY)");
      expect(migrate(state.storage, "probe", [good, fixed])).toBe(1);
      expect(versionsOf(sql).probe).toBe(2);
      expect(tableNames(sql)).toContain("probe_half");
    });
  });

  it("a traffic store's restart reads one version per area and runs no DDL", async () => {
    await runInDurableObject(freshStore(), (_store: TrafficStore, state) => {
      expect(versionsOf(state.storage.sql)).toEqual({ traffic_layout: 4, usage_meter: 4 });
      const restart = recording(state.storage);
      new AccountTraffic(restart.storage);
      expect(restart.statements.filter((query) => DDL.test(query))).toEqual([]);
      expect(restart.statements.filter((query) => query.includes("_storage_versions"))).toHaveLength(2);
    });
  });

  it("the key guard and the sub-user gate record their areas' versions", async () => {
    const guard = env.API_KEY_GUARD.get(env.API_KEY_GUARD.idFromName(`versions-${crypto.randomUUID()}`));
    await runInDurableObject(guard, (_guard: ApiKeyGuard, state) => {
      expect(versionsOf(state.storage.sql)).toEqual({ api_key_guard: 1 });
    });
    const gate = env.SUBUSER_GATE.get(env.SUBUSER_GATE.idFromName(`versions-${crypto.randomUUID()}`));
    await runInDurableObject(gate, (_gate: SubuserGate, state) => {
      expect(versionsOf(state.storage.sql)).toEqual({ session_book: 4, session_generations: 1, subuser_gate: 6 });
    });
  });
});

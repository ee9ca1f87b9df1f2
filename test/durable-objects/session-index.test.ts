import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type { SessionDelta, StorePart } from "../../src/durable-objects/traffic-store/contract";
import { mergeSessionFinds } from "../../src/durable-objects/traffic-store/shard-merge";
import { sessionIdAt } from "../../src/platform/sticky-sessions";

// Sessions a node decided (`session_gen` on usage records): the account's store names each from the usage it applies.

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const FIGURES = { pools: [], subusers: [], months: [] };
const ACCOUNT = "usr_01JD2W6Q6J5E4V3N0Z9Y8X7W6V";
const KEY = "user_abc-type-res-region-us-session-s1-sesstime-10";
const SESSTIME = 10 * MINUTE;

let requestCounter = 0;

/** A keyed delta as the usage route sends it: provisional identity, usage of `requests` records from `firstTs`. */
function keyed(
  firstTs: number,
  fields: { key?: string; generation?: number; exit?: string; requests?: number; repinned?: boolean } = {},
): SessionDelta {
  const key = fields.key ?? KEY;
  const generation = fields.generation ?? 0;
  const exit = fields.exit ?? "203.0.113.7";
  const requests = fields.requests ?? 1;
  const lastRequests = Array.from({ length: Math.min(requests, 10) }, (_, i) => ({
    requestId: `req_idx${++requestCounter}`,
    ts: firstTs + (requests - 1 - i),
    method: "GET",
    targetHost: "example.com",
    status: 200,
    bytes: 100,
    exitIp: exit,
  }));
  return {
    id: sessionIdAt(key, generation, firstTs),
    key,
    generation,
    subuserId: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
    gateName: "abc",
    product: "residential",
    sessionId: "s1",
    region: "us",
    state: null,
    city: null,
    asn: null,
    startedAt: firstTs,
    expiresAt: firstTs + SESSTIME,
    usage: {
      username: key,
      product: "residential",
      firstTs,
      lastTs: firstTs + requests - 1,
      firstExitIp: exit,
      repinnedExitIp: fields.repinned ? exit : null,
      bytes: 100 * requests,
      requests,
      lastRequests,
    },
  };
}

let partCounter = 0;

function part(sessions: SessionDelta[], at: number, key = `b${++partCounter}:${ACCOUNT}:0`): StorePart {
  return { key, receivedAt: at, cells: [], samples: [], sessions };
}

/** Runs `body` on a fresh store of its own (a restart: `reopen`). */
async function withStore(name: string, body: (store: Store) => void): Promise<void> {
  const stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(name));
  await runInDurableObject(stub, (_instance, state) => {
    const store = new Store(state.storage);
    body(store);
  });
}

class Store {
  traffic: AccountTraffic;
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.traffic = new AccountTraffic(storage);
  }

  ingest(at: number, ...parts: StorePart[]) {
    const outcome = this.traffic.ingest({ accountId: ACCOUNT, parts }, FIGURES, at);
    expect(outcome.outcome).toBe("applied");
    return outcome;
  }

  list(at: number, filters: { generation?: number } = {}) {
    const all = this.traffic.listSessions({ product: "residential", limit: 100 }, at);
    return filters.generation === undefined ? all : all.filter((s) => s.generation === filters.generation);
  }

  find(id: string, at: number) {
    return this.traffic.session(id, at);
  }

  reopen(): void {
    this.traffic = new AccountTraffic(this.#storage);
  }

  sql<T extends Record<string, SqlStorageValue>>(query: string): T[] {
    return this.#storage.sql.exec<T>(query).toArray();
  }
}

describe("the account's store names sessions a node decided (key and generation)", () => {
  it("mints the id from the key, generation and first request's time; expires_at is a sesstime later", async () => {
    await withStore("node-sessions-mint", (store) => {
      const first = T0 + 1234;
      // A provisional id that is not the store's: the store names the session itself.
      store.ingest(first + 500, part([{ ...keyed(first), id: "ses_00000000000000000000000000" }], first + 500));
      const [session, ...rest] = store.list(first + 1000);
      expect(rest).toEqual([]);
      expect(session).toMatchObject({
        id: sessionIdAt(KEY, 0, first),
        key: KEY,
        generation: 0,
        startedAt: first,
        expiresAt: first + SESSTIME,
        status: "active",
        requests: 1,
        bytesUsed: 100,
        exitIp: "203.0.113.7",
        repinned: false,
      });
      // No row per session: the identity is kept in the arrival row with its usage.
      expect(store.sql("SELECT id FROM session_records")).toEqual([]);
    });
  });

  it("puts the usage of one key and generation from two parts (two nodes) in one session, and a later ingest too", async () => {
    await withStore("node-sessions-one", (store) => {
      const first = T0;
      store.ingest(
        first + 2000,
        part([keyed(first + 1000, { requests: 2 })], first + 2000),
        part([keyed(first)], first),
      );
      store.ingest(first + 3 * MINUTE, part([keyed(first + 2 * MINUTE, { requests: 3 })], first + 3 * MINUTE));
      const sessions = store.list(first + 4 * MINUTE);
      expect(sessions).toHaveLength(1);
      expect(sessions[0]).toMatchObject({ id: sessionIdAt(KEY, 0, first), startedAt: first, requests: 6 });
      expect(store.find(sessionIdAt(KEY, 0, first), first + 4 * MINUTE)?.lastRequests).toHaveLength(6);
    });
  });

  it("moves the start earlier (same id) for a late record up to the clock skew before it; further back is a new session", async () => {
    await withStore("node-sessions-earlier", (store) => {
      const first = T0 + 10 * MINUTE;
      store.ingest(first, part([keyed(first)], first));
      const id = sessionIdAt(KEY, 0, first);
      store.ingest(first + MINUTE, part([keyed(first - 4 * MINUTE)], first + MINUTE));
      expect(store.list(first + MINUTE)).toEqual([
        expect.objectContaining({ id, startedAt: first - 4 * MINUTE, expiresAt: first + 6 * MINUTE, requests: 2 }),
      ]);
      // Within the session's (moved) time: the same session.
      store.ingest(first + 2 * MINUTE, part([keyed(first + 5 * MINUTE)], first + 2 * MINUTE));
      expect(store.list(first + 2 * MINUTE).map((s) => [s.id, s.requests])).toEqual([[id, 3]]);
      // Its start moved: a record 5 minutes before it or more is a session of its own.
      const older = first - 9 * MINUTE - 1;
      store.ingest(first + 2 * MINUTE, part([keyed(older)], first + 2 * MINUTE));
      // (Listed while both are live.)
      expect(store.list(first).map((s) => s.id)).toEqual([id, sessionIdAt(KEY, 0, older)]);

      // The moved start and the ids survive a restart (the arrival rows keep each delta with its session's identity).
      const before = store.list(first);
      store.reopen();
      expect(store.list(first)).toEqual(before);
      expect(store.find(id, first + 2 * MINUTE)?.session.startedAt).toBe(first - 4 * MINUTE);
      store.ingest(first + 3 * MINUTE, part([keyed(first + 5 * MINUTE + 1)], first + 3 * MINUTE));
      expect(store.find(id, first + 3 * MINUTE)?.session.requests).toBe(4);
    });
  });

  it("starts a new session at or after expires_at; the old one is gone from reads once expired", async () => {
    await withStore("node-sessions-expiry", (store) => {
      const first = T0;
      store.ingest(first, part([keyed(first)], first));
      const old = sessionIdAt(KEY, 0, first);
      store.ingest(first + SESSTIME - 1, part([keyed(first + SESSTIME - 1)], first + SESSTIME - 1));
      expect(store.list(first + SESSTIME - 1).map((s) => [s.id, s.requests])).toEqual([[old, 2]]);
      store.ingest(first + SESSTIME, part([keyed(first + SESSTIME)], first + SESSTIME));
      const next = sessionIdAt(KEY, 0, first + SESSTIME);
      expect(next).not.toBe(old);
      expect(store.list(first + SESSTIME).map((s) => [s.id, s.startedAt, s.requests])).toEqual([
        [next, first + SESSTIME, 1],
      ]);
      expect(store.find(old, first + SESSTIME)).toBeNull();
      expect(store.find(old, first + SESSTIME - 1)?.session.requests).toBe(2);
    });
  });

  it("keeps generations apart: another generation of the key is another session", async () => {
    await withStore("node-sessions-generations", (store) => {
      const first = T0;
      store.ingest(first, part([keyed(first), keyed(first + 10, { generation: 1, exit: "203.0.113.9" })], first));
      const sessions = store.list(first + 100);
      expect(sessions.map((s) => [s.id, s.generation]).sort()).toEqual(
        [
          [sessionIdAt(KEY, 0, first), 0],
          [sessionIdAt(KEY, 1, first + 10), 1],
        ].sort(),
      );
    });
  });

  it("adds usage of a terminated session's key and generation within its time to its terminated record", async () => {
    await withStore("node-sessions-terminated", (store) => {
      const first = T0;
      store.ingest(first, part([keyed(first, { requests: 2 })], first));
      const id = sessionIdAt(KEY, 0, first);
      const found = store.find(id, first + MINUTE);
      expect(found).not.toBeNull();
      // How termination tells the store: the store's own snapshot, terminated.
      const terminatedAt = first + MINUTE;
      store.traffic.upsertSessions([
        { ...(found?.session as NonNullable<typeof found>["session"]), status: "terminated", terminatedAt },
      ]);
      expect(store.sql<{ id: string }>("SELECT id FROM session_records").map((r) => r.id)).toEqual([id]);
      // Usage in flight (a node that had not heard yet) joins it, across a restart too.
      store.reopen();
      store.ingest(first + 2 * MINUTE, part([keyed(first + 90_000)], first + 2 * MINUTE));
      expect(store.list(first + 2 * MINUTE)).toEqual([
        expect.objectContaining({ id, status: "terminated", terminatedAt, requests: 3 }),
      ]);
      store.reopen();
      expect(store.find(id, first + 2 * MINUTE)?.session).toMatchObject({ status: "terminated", requests: 3 });
      // Past its time, the same generation's usage is a new session (the next generation is the node's to use).
      store.ingest(first + SESSTIME, part([keyed(first + SESSTIME)], first + SESSTIME));
      expect(store.list(first + SESSTIME).map((s) => [s.id, s.status])).toEqual([
        [sessionIdAt(KEY, 0, first + SESSTIME), "active"],
        [id, "terminated"],
      ]);
    });
  });

  it("marks the session repinned when a delta's exit differs from the session's so far, or a record says so", async () => {
    await withStore("node-sessions-repinned", (store) => {
      const first = T0;
      store.ingest(first, part([keyed(first, { exit: "203.0.113.1" })], first));
      store.ingest(first + MINUTE, part([keyed(first + 1000, { exit: "203.0.113.1" })], first + MINUTE));
      expect(store.list(first + MINUTE)[0]).toMatchObject({ exitIp: "203.0.113.1", repinned: false });
      store.ingest(first + 2 * MINUTE, part([keyed(first + 2000, { exit: "203.0.113.2" })], first + 2 * MINUTE));
      expect(store.list(first + 2 * MINUTE)[0]).toMatchObject({ exitIp: "203.0.113.2", repinned: true });
      // Late usage of the old exit before it does not move the exit back.
      store.ingest(first + 3 * MINUTE, part([keyed(first - 1000, { exit: "203.0.113.3" })], first + 3 * MINUTE));
      expect(store.list(first + 3 * MINUTE)[0]).toMatchObject({ exitIp: "203.0.113.2", repinned: true, requests: 4 });
      store.reopen();
      expect(store.list(first + 3 * MINUTE)[0]).toMatchObject({ exitIp: "203.0.113.2", repinned: true, requests: 4 });

      const other = "user_abc-type-res-region-us-session-s2-sesstime-10";
      store.ingest(first + 3 * MINUTE, part([keyed(first, { key: other, repinned: true })], first + 3 * MINUTE));
      expect(store.list(first + 3 * MINUTE).find((s) => s.key === other)).toMatchObject({ repinned: true });
    });
  });

  it("applies a part once whatever the redeliveries", async () => {
    await withStore("node-sessions-once", (store) => {
      const first = T0;
      const once = part([keyed(first, { requests: 3 })], first, "batch-1:acct:0");
      store.ingest(first, once);
      expect(store.ingest(first + 1000, once)).toMatchObject({ applied: 0 });
      store.reopen();
      expect(store.ingest(first + 2000, once)).toMatchObject({ applied: 0 });
      expect(store.list(first + 3000)).toEqual([expect.objectContaining({ requests: 3, bytesUsed: 300 })]);
    });
  });

  it("leaves sessions without a key (named by the gate) as they were: their own ids and times", async () => {
    await withStore("node-sessions-legacy", (store) => {
      const first = T0;
      const { key: _key, generation: _generation, ...legacy } = keyed(first);
      const named = {
        ...legacy,
        id: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6A",
        startedAt: first - MINUTE,
        expiresAt: first + MINUTE,
      };
      store.ingest(first, part([named, { ...named, usage: keyed(first - 2 * MINUTE).usage }], first));
      expect(store.list(first)).toEqual([
        expect.objectContaining({ id: named.id, startedAt: first - MINUTE, expiresAt: first + MINUTE, requests: 2 }),
      ]);
    });
  });
});

describe("a session as several stores know it (shard-merge)", () => {
  it("keeps the earliest start of the copies", () => {
    const copy = (startedAt: number, requests: number) => ({
      session: {
        id: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6A",
        subuserId: "sub_x",
        gateName: "x",
        product: "residential" as const,
        sessionId: "s1",
        region: "us",
        state: null,
        city: null,
        asn: null,
        exitIp: "203.0.113.1",
        startedAt,
        expiresAt: startedAt + SESSTIME,
        status: "active" as const,
        terminatedAt: null,
        bytesUsed: requests * 100,
        requests,
        repinned: false,
        version: requests,
      },
      lastRequests: [],
    });
    expect(mergeSessionFinds([copy(T0 + 1000, 2), copy(T0, 1)])?.session).toMatchObject({
      startedAt: T0,
      expiresAt: T0 + SESSTIME,
      requests: 3,
    });
  });
});

import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { domainContext } from "../../src/domain/context";
import { accountStore } from "../../src/domain/traffic/store";
import { subuserShard, TrafficStoreClient } from "../../src/durable-objects/traffic-store";
import { ownerTag } from "../../src/platform/owner-tag";
import { sessionIdAt, sessionKey } from "../../src/platform/sticky-sessions";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { admin, call, env, json } from "../helpers/http";
import { authorize, createSubuser, gateOf, type TestSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, reportUsage, settledFirst, traffic, usageRecord } from "../helpers/usage";

// Each test waits for usage of two accounts to pass through the queues.
const SLOW = { timeout: 60_000 };
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const MB = 1_000_000;
const iso = (ms: number) => new Date(ms).toISOString();

afterEach(() => vi.restoreAllMocks());

const reshard = (account: TestAccount, shards: number) =>
  admin("PUT", `/accounts/${account.id}/traffic-shards`, { traffic_shards: shards });

async function shardedTo(account: TestAccount, shards: number): Promise<void> {
  for (let count = 2; count <= shards; count *= 2) expect((await reshard(account, count)).status).toBe(200);
}

/** An account with `count` sub-users, and a sticky session pinned by the first. */
async function seedAccount(count: number) {
  const account = await createAccount({ bandwidthGb: 10 });
  const subusers: TestSubuser[] = [];
  for (let i = 0; i < count; i++) subusers.push(await createSubuser(account));
  return { account, subusers };
}

/** The same usage for each account: sub-user i sends i + 1 records, some failed, one sticky session. */
function usageOf(subusers: TestSubuser[], at: number, sessionUser: string) {
  return subusers.flatMap((subuser, i) =>
    Array.from({ length: i + 1 }, (_, n) =>
      usageRecord(n === 0 && i === 0 ? sessionUser : username(subuser.name), {
        ts: iso(at - (i * 7 + n) * MINUTE),
        bytes_in: 100_000 * (i + 1) + n,
        bytes_out: 1_000 * (n + 1),
        status: n === 2 ? 502 : 200,
        error_code: n === 2 ? "upstream-timeout" : null,
      }),
    ),
  );
}

const range = (at: number) => `from=${iso(at - 3 * HOUR - (at % MINUTE))}&to=${iso(at + MINUTE - (at % MINUTE))}`;
const get = async (account: TestAccount, path: string) => json(await call("GET", path, { token: account.token }));

/** Every figure the API shows of the account's usage, with sub-user ids as their index (comparable across accounts). */
async function figures(account: TestAccount, subusers: TestSubuser[], at: number) {
  const indexOf = new Map(subusers.map((subuser, i) => [subuser.id, i]));
  const labelIndex = new Map(subusers.map((subuser, i) => [subuser.label, i]));
  const total = await traffic(account, "residential", range(at));
  const bySubuser = await traffic(account, "residential", `${range(at)}&group_by=subuser`);
  const byHour = await traffic(account, "residential", `${range(at)}&group_by=hour`);
  const ofThird = await traffic(account, "residential", `${range(at)}&subuser=${subusers[2]?.id}&group_by=region`);
  const log = await get(account, "/v1/residential/requests?limit=20");
  const sessions = await get(account, "/v1/residential/sessions");
  const used = [];
  for (const subuser of subusers) used.push((await get(account, `/v1/subusers/${subuser.id}`)).traffic_used_gb);
  return {
    total: total.rows,
    bySubuser: bySubuser.rows.map((row: any) => ({
      ...row,
      subuser: indexOf.get(row.subuser),
      label: labelIndex.get(row.label),
    })),
    byHour: byHour.rows,
    ofThird: ofThird.rows,
    log: log.data.map((entry: any) => [entry.ts, entry.bytes, entry.status, indexOf.get(entry.subuser_id)]),
    sessions: sessions.data.map((s: any) => [s.requests, s.bytes_used, s.exit_ip, s.status]),
    used,
  };
}

/** The residential requests each of the account's stores holds over the range. */
async function requestsPerStore(account: TestAccount, shards: number, at: number): Promise<number[]> {
  const query = {
    product: "residential" as const,
    from: at - 3 * HOUR - (at % MINUTE),
    to: at + MINUTE - (at % MINUTE),
    resolution: "1m" as const,
    groupBy: null,
    filters: {},
  };
  const ctx = domainContext(env);
  return Promise.all(
    Array.from(
      { length: shards },
      async (_, shard) => (await accountStore(ctx, account.id, shard).traffic(query))[0]?.requests ?? 0,
    ),
  );
}

const gbUsed = async (account: TestAccount) => (await get(account, "/v1/residential/balance")).gb_used;

describe("a busy account's traffic split over stores by sub-user (accounts.traffic_shards)", () => {
  it("two calls racing from the same count: one doubles it, the other is 422 and the count never shrinks", async () => {
    const { account } = await seedAccount(0);
    const statuses = (await Promise.all([reshard(account, 2), reshard(account, 2)])).map((r) => r.status);
    expect(statuses.sort()).toEqual([200, 422]);
    expect((await reshard(account, 4)).status).toBe(200);
    expect((await reshard(account, 2)).status).toBe(422);
    expect(await json(await reshard(account, 8))).toEqual({ account_id: account.id, traffic_shards: 8 });
  });

  it(
    "with traffic_shards = 4, 8 sub-users' usage lands in several stores, and totals, groups, a sub-user filter, the request log, sessions, traffic_used_gb and the pool's gb_used equal those of the same usage on a one-shard account",
    SLOW,
    async () => {
      const one = await seedAccount(8);
      const four = await seedAccount(8);
      await shardedTo(four.account, 4);
      const at = Date.now();
      for (const { account, subusers } of [one, four]) {
        const sessionUser = username(subusers[0]?.name ?? "", "type-res-region-us-session-s1-sesstime-30");
        expect((await authorize({ username: sessionUser, password: subusers[0]?.password ?? "" })).allow).toBe(true);
        expect(await runDurableObjectAlarm(gateOf(subusers[0] as TestSubuser))).toBe(true);
        const records = usageOf(subusers, at, sessionUser);
        expect((await reportUsage(records)).status).toBe(202);
        await eventually(
          () => traffic(account, "residential", range(at)),
          (body) => body.rows[0].requests === records.length,
        );
      }
      const stores = await requestsPerStore(four.account, 4, at);
      expect(stores.reduce((a, b) => a + b, 0)).toBe(36);
      expect(stores.filter((requests) => requests > 0).length).toBeGreaterThan(1);

      const expected = await figures(one.account, one.subusers, at);
      expect(expected.sessions).toEqual([[1, 100_000 + 1_000, "203.0.113.5", "active"]]);
      expect(await figures(four.account, four.subusers, at)).toEqual(expected);
      const settled = await eventually(
        settledFirst(one.account, () => gbUsed(one.account)),
        (gb) => gb > 0,
      );
      expect(
        await eventually(
          settledFirst(four.account, () => gbUsed(four.account)),
          (gb) => gb > 0,
        ),
      ).toBe(settled);
    },
  );

  it(
    "re-sharding from 1 to 2 while usage is in flight: parts routed by the old count land in the old store, and totals, each sub-user's traffic_used_gb and the pool's gb_used count every record once",
    SLOW,
    async () => {
      const { account, subusers } = await seedAccount(8);
      const at = Date.now();
      const batches = [0, 1, 2].map((b) =>
        subusers.map((subuser, i) =>
          usageRecord(username(subuser.name), {
            ts: iso(at - b * MINUTE),
            bytes_in: (i + 1) * MB - 500,
            bytes_out: 500,
          }),
        ),
      );
      expect((await reportUsage(batches[0] ?? [])).status).toBe(202);
      await eventually(
        () => traffic(account, "residential", range(at)),
        (body) => body.rows[0].requests === 8,
      );
      // Batch 1 is posted (routed by one store) and held in the queue while the account goes to two stores.
      const held = holdUsageMessages();
      expect((await reportUsage(batches[1] ?? [])).status).toBe(202);
      expect(await json(await reshard(account, 2))).toEqual({ account_id: account.id, traffic_shards: 2 });
      expect((await held.deliver()).retryMessages).toHaveLength(0);
      vi.restoreAllMocks();
      expect((await reportUsage(batches[2] ?? [])).status).toBe(202);

      const total = await eventually(
        () => traffic(account, "residential", range(at)),
        (body) => body.rows[0].requests === 24,
      );
      expect(total.rows[0]).toMatchObject({ requests: 24, bytes_in: 3 * (36 * MB - 8 * 500), bytes_out: 24 * 500 });
      // Batches 0 and 1 (routed by one store) in store 0; batch 2 by each sub-user's store of two.
      const inSecond = subusers.filter((subuser) => subuserShard(subuser.id, 2) === 1).length;
      expect(await requestsPerStore(account, 2, at)).toEqual([16 + 8 - inSecond, inSecond]);
      for (const [i, subuser] of subusers.entries()) {
        expect((await get(account, `/v1/subusers/${subuser.id}`)).traffic_used_gb).toBe((3 * (i + 1)) / 1000);
      }
      expect(
        await eventually(
          settledFirst(account, () => gbUsed(account)),
          (gb) => gb >= 0.108,
        ),
      ).toBe(0.108);
    },
  );

  it("takes only twice the current count, up to 64: anything else is 422 and changes nothing", async () => {
    const { account } = await seedAccount(0);
    for (const shards of [1, 3, 4, 128]) expect((await reshard(account, shards)).status).toBe(422);
    expect((await reshard(account, 2)).status).toBe(200);
    expect((await reshard(account, 2)).status).toBe(422);
    expect(await json(await reshard(account, 4))).toEqual({ account_id: account.id, traffic_shards: 4 });
    expect(
      (await admin("PUT", "/accounts/usr_01JD2W6Q6J5E4V3N0Z9Y8X7W6V/traffic-shards", { traffic_shards: 2 })).status,
    ).toBe(404);
  });

  it(
    "a capped sub-user that moves to another store at a re-shard keeps its month: its cap still refuses at 100 % (402 traffic-limit-reached)",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      let subuser = await createSubuser(account, { traffic_limit_gb: 0.5 });
      while (subuserShard(subuser.id, 2) !== 1) subuser = await createSubuser(account, { traffic_limit_gb: 0.5 });
      const use = async (megabytes: number) => {
        const record = usageRecord(username(subuser.name), { bytes_in: megabytes * MB - 1000, bytes_out: 1000 });
        expect((await reportUsage([record])).status).toBe(202);
      };
      const usedGb = () => get(account, `/v1/subusers/${subuser.id}`).then((body) => body.traffic_used_gb);
      const decide = () => authorize({ username: username(subuser.name), password: subuser.password });
      await use(300);
      await eventually(usedGb, (gb) => gb === 0.3);
      await shardedTo(account, 2);
      expect((await decide()).allow).toBe(true);
      await use(250);
      await eventually(settledFirst(account, usedGb), (gb) => gb === 0.55);
      expect(await decide()).toMatchObject({ allow: false, status: 402, error_code: "traffic-limit-reached" });
    },
  );

  it(
    "sessions a node decided live in their sub-user's store: listed across the stores, read by id, each once",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const onShard = async (shard: number) => {
        let subuser = await createSubuser(account);
        while (subuserShard(subuser.id, 2) !== shard) subuser = await createSubuser(account);
        return subuser;
      };
      const [first, second] = [await onShard(0), await onShard(1)] as [TestSubuser, TestSubuser];
      await shardedTo(account, 2);
      const t = Date.now() - 1000;
      const records = await Promise.all(
        [first, second].flatMap((subuser, i) =>
          [0, 1].map(async (n) =>
            usageRecord(username(subuser.name, "type-res-region-us-session-shard1-sesstime-10"), {
              ts: iso(t + i * 10 + n),
              session_gen: 0,
              subuser: subuser.id,
              account: account.id,
              owner_tag: await ownerTag(env.SEALING_KEY, {
                name: subuser.name,
                subuserId: subuser.id,
                accountId: account.id,
              }),
            }),
          ),
        ),
      );
      expect(await json(await reportUsage(records))).toMatchObject({ accepted: 4, dropped: 0 });
      const ids = [first, second].map((subuser, i) =>
        sessionIdAt(sessionKey(username(subuser.name, "type-res-region-us-session-shard1-sesstime-10")), 0, t + i * 10),
      );
      const listed = await eventually(
        () => get(account, "/v1/residential/sessions"),
        (page) => page.data.length === 2 && page.data.every((s: { requests: number }) => s.requests === 2),
      );
      expect(listed.data.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
      for (const [i, subuser] of [first, second].entries()) {
        expect(await get(account, `/v1/residential/sessions/${ids[i]}`)).toMatchObject({
          id: ids[i],
          subuser: subuser.id,
          requests: 2,
          started_at: iso(t + i * 10),
        });
        const own = await get(account, `/v1/residential/sessions?subuser=${subuser.id}`);
        expect(own.data.map((s: { id: string }) => s.id)).toEqual([ids[i]]);
      }
      expect(await requestsPerStore(account, 2, t)).toEqual([2, 2]);
    },
  );

  it(
    "a one-shard account's reads make exactly one store call each, to the store named by the account id",
    SLOW,
    async () => {
      const { account, subusers } = await seedAccount(2);
      const at = Date.now();
      expect((await reportUsage(usageOf(subusers, at, username(subusers[0]?.name ?? "")))).status).toBe(202);
      await eventually(
        () => traffic(account, "residential", range(at)),
        (body) => body.rows[0].requests === 3,
      );
      const names = vi.spyOn(env.TRAFFIC_STORE, "idFromName");
      const calls = (["traffic", "requests", "listSessions", "periodUsage"] as const).map((method) =>
        vi.spyOn(TrafficStoreClient.prototype, method),
      );
      await traffic(account, "residential", `${range(at)}&group_by=subuser`);
      await traffic(account, "residential", `${range(at)}&subuser=${subusers[1]?.id}`);
      await get(account, "/v1/residential/requests");
      await get(account, "/v1/residential/sessions");
      await get(account, `/v1/subusers/${subusers[1]?.id}`);
      expect(calls.map((spy) => spy.mock.calls.length)).toEqual([2, 1, 1, 1]);
      expect(new Set(names.mock.calls.map(([name]) => name))).toEqual(new Set([account.id]));
    },
  );
});

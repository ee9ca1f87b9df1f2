// The gateway's pure parts, without the API: `node --test gateway/test/units.test.ts`.
import assert from "node:assert/strict";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { keyHash, sessionKey, stickyExit } from "../../src/platform/sticky-sessions.ts";
import { type ApiClient, ConnectionAuth, type IspCredentials } from "../api-client.ts";
import { realClock } from "../clock.ts";
import { chooseExit, type ExitDecision, ExitPool, simulatedPools } from "../exits.ts";
import { createProxyServer, type GatewayDecider } from "../proxy-server.ts";
import { StickyExits } from "../session-cache.ts";
import { usageReporter } from "../usage-reporter.ts";
import type { AuthorizeDecision, ProxyTarget, UsageBatch, UsageRecord } from "../wire.ts";

const quiet = { error() {} };
const target: ProxyTarget = {
  type: "res",
  region: "us",
  state: null,
  city: null,
  asn: null,
  session_id: null,
  sesstime: null,
};
const allow = (lease: string, ttl = 30): AuthorizeDecision => ({
  allow: true,
  subuser: "sub_a",
  lease,
  cache_ttl_s: ttl,
  target_rules: null,
  product: "residential",
  target,
  session: null,
});
/** A usage record of its own id (the reporter sends what it is given). */
const record = (requestId: string) => ({ request_id: requestId }) as UsageRecord;
const batchOf = (gzipped: Uint8Array): UsageBatch => JSON.parse(gunzipSync(gzipped).toString());

describe("usage reporter", () => {
  it("retries a failed batch with the same batch_id, gzip-compressed", async () => {
    const sent: UsageBatch[] = [];
    let failuresLeft = 1;
    const api = {
      async reportUsage(gzipped: Uint8Array) {
        sent.push(batchOf(gzipped));
        if (failuresLeft-- > 0) throw new Error("POST /usage: 503 ");
        return { accepted: 2, dropped: 0, duplicate: false };
      },
    };
    const usage = usageReporter(api, { flushMs: 10, log: quiet });
    usage.add(record("req_1"));
    usage.add(record("req_2"));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await usage.drain();
    assert.equal(sent.length, 2);
    assert.equal(sent[0]?.batch_id, sent[1]?.batch_id);
    assert.deepEqual(
      sent[1]?.records.map((sentRecord) => sentRecord.request_id),
      ["req_1", "req_2"],
    );
  });

  it("splits records into batches of at most maxRecords, each with its own batch_id", async () => {
    const sent: UsageBatch[] = [];
    const usage = usageReporter(
      {
        reportUsage: async (gzipped) => {
          sent.push(batchOf(gzipped));
          return { accepted: 0, dropped: 0, duplicate: false };
        },
      },
      {
        flushMs: 10,
        maxRecords: 2,
        log: quiet,
      },
    );
    for (let i = 0; i < 5; i++) usage.add(record(`req_${i}`));
    await usage.drain();
    assert.deepEqual(
      sent.map((batch) => batch.records.length),
      [2, 2, 1],
    );
    assert.equal(new Set(sent.map((batch) => batch.batch_id)).size, 3);
  });
});

describe("connection authorization", () => {
  function countingApi(decisions: AuthorizeDecision[]) {
    const api: Pick<ApiClient, "authorize" | "release"> & { asked: number; released: string[] } = {
      asked: 0,
      released: [],
      authorize: async () => decisions[api.asked++] as AuthorizeDecision,
      release: async (lease) => {
        api.released.push(lease);
        return { released: true };
      },
    };
    return api;
  }
  const credentials: IspCredentials = { username: "user_a-type-res-region-us", password: "p", product: "residential" };

  it("serves further requests of a connection from the decision while cache_ttl_s lasts", async () => {
    const api = countingApi([allow("a.1", 30), allow("a.2", 30)]);
    const auth = new ConnectionAuth(api, "127.0.0.1");
    await auth.decide(credentials);
    await auth.decide(credentials);
    assert.equal(api.asked, 1);
  });

  it("after cache_ttl_s asks again and releases the replaced lease; closing releases the last one", async () => {
    const api = countingApi([allow("a.1", 0), allow("a.2", 0)]);
    const auth = new ConnectionAuth(api, "127.0.0.1");
    await auth.decide(credentials);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await auth.decide(credentials);
    assert.equal(api.asked, 2);
    assert.deepEqual(api.released, ["a.1"]);
    auth.close();
    assert.deepEqual(api.released, ["a.1", "a.2"]);
  });

  it("asks again when the credentials change, and never caches a refusal", async () => {
    const api = countingApi([{ allow: false, status: 407, error_code: "auth-failed" }, allow("a.1"), allow("a.2")]);
    const auth = new ConnectionAuth(api, "127.0.0.1");
    assert.equal((await auth.decide(credentials)).allow, false);
    assert.equal((await auth.decide(credentials)).allow, true);
    await auth.decide({ ...credentials, password: "q" });
    assert.equal(api.asked, 3);
    assert.deepEqual(api.released, ["a.1"]);
  });

  it("answers 503 auth-unavailable when the API cannot be asked", async () => {
    const down = { authorize: () => Promise.reject(new Error("down")), release: async () => ({ released: false }) };
    const auth = new ConnectionAuth(down, "127.0.0.1");
    const original = console.error;
    console.error = () => {};
    try {
      assert.deepEqual(await auth.decide(credentials), { allow: false, status: 503, error_code: "auth-unavailable" });
    } finally {
      console.error = original;
    }
  });
});

describe("exit simulation", () => {
  const london: ProxyTarget = { ...target, region: "gb", state: "eng", city: "london" };
  const session = (id: string, exitIp: string | null) => ({ id, exit_ip: exitIp, started_at: "", expires_at: "" });

  it("an authorize decision's sticky session keeps the pinned exit; unpinned it is derived from the session id", () => {
    const pinned: ExitDecision = { product: "residential", target: london, session: session("ses_1", "198.51.100.77") };
    assert.equal(chooseExit(pinned, { connectionSeed: "1" }).ip, "198.51.100.77");
    const fresh: ExitDecision = { ...pinned, session: session("ses_2", null) };
    assert.equal(chooseExit(fresh, { connectionSeed: "1" }).ip, chooseExit(fresh, { connectionSeed: "2" }).ip);
  });

  it("mobile exits are in TEST-NET-3 with a carrier; a repin of an authorize session moves the exit and says so", () => {
    const decision: ExitDecision = { product: "mobile", target: london, session: session("ses_3", "203.0.113.5") };
    const exit = chooseExit(decision, { connectionSeed: "9", repin: true });
    assert.match(exit.ip, /^203\.0\.113\.\d+$/);
    assert.equal(exit.repinned, exit.ip !== "203.0.113.5");
    assert.equal(typeof exit.carrier, "string");
    assert.equal(exit.geo, "gb/eng/london");
    assert.ok(exit.asn >= 64496 && exit.asn <= 64511);
  });
});

describe("sticky exits at the node", () => {
  const key = sessionKey("user_s1-type-res-region-us-session-a1-sesstime-10");
  const all = new ExitPool("198.51.100").candidates;

  it("a node's session carries its exit: chooseExit gives it, and its repinned", () => {
    const london: ProxyTarget = { ...target, region: "gb", state: "eng", city: "london" };
    const session = { key, generation: 2, exit_ip: "198.51.100.9", repinned: true };
    const exit = chooseExit({ product: "residential", target: london, session }, { connectionSeed: "1" });
    assert.deepEqual([exit.ip, exit.repinned, exit.geo], ["198.51.100.9", true, "gb/eng/london"]);
  });

  it("every node gives the shared rule's exit for a key and generation; each generation's differs from the last", () => {
    const [one, two] = [new StickyExits(), new StickyExits()];
    for (let generation = 0; generation < 5; generation++) {
      const exit = one.exitOf("residential", key, generation);
      assert.deepEqual(exit, { ip: stickyExit(all, key, generation), repinned: false });
      assert.deepEqual(two.exitOf("residential", key, generation), exit);
      if (generation > 0) assert.notEqual(exit.ip, one.exitOf("residential", key, generation - 1).ip);
    }
    assert.match(one.exitOf("mobile", key, 0).ip, /^203\.0\.113\.\d+$/);
    assert.equal(keyHash(key).length, 16);
  });

  it("an exit leaving the pool moves only its sessions, whose next request says repinned", () => {
    const pools = simulatedPools();
    const exits = new StickyExits({ pools });
    const keys = Array.from({ length: 300 }, (_, i) =>
      sessionKey(`user_s${i}-type-res-region-us-session-a-sesstime-5`),
    );
    const before = keys.map((k) => exits.exitOf("residential", k, 0).ip);
    const lost = exits.exitOf("residential", key, 0).ip;
    assert.ok(pools.residential.drop(lost));
    const after = keys.map((k) => exits.exitOf("residential", k, 0));
    keys.forEach((_, i) => {
      const moved = before[i] === lost;
      assert.equal(after[i]?.repinned, moved);
      assert.equal(after[i]?.ip === before[i], !moved);
    });
    assert.deepEqual(exits.exitOf("residential", key, 0), {
      ip: stickyExit(pools.residential.candidates, key, 0),
      repinned: true,
    });
    assert.equal(exits.exitOf("residential", key, 0).repinned, false, "once");
  });

  it("a repin drops the exit at this node only and says so on that request, even the session's first", () => {
    const exits = new StickyExits();
    const first = exits.exitOf("mobile", key, 0, { repin: true });
    assert.equal(first.repinned, true);
    assert.notEqual(first.ip, stickyExit(new ExitPool("203.0.113").candidates, key, 0));
    assert.equal(
      new StickyExits().exitOf("mobile", key, 0).ip,
      stickyExit(new ExitPool("203.0.113").candidates, key, 0),
    );
  });

  it("a pool keeps its last exit; the remembered exits are bounded and forgotten when idle", () => {
    const pool = new ExitPool("198.51.100");
    for (const ip of all.slice(1)) assert.ok(pool.drop(ip));
    assert.equal(pool.drop(all[0] ?? ""), false);
    assert.deepEqual(pool.candidates, [all[0]]);
    assert.equal(pool.drop("192.0.2.1"), false);

    let now = 0;
    const clock = { ...realClock, now: () => now };
    const exits = new StickyExits({ clock, maxEntries: 3, idleMs: 1000 });
    for (let generation = 0; generation < 5; generation++) exits.exitOf("residential", key, generation);
    assert.equal(exits.size, 3);
    now = 600;
    exits.exitOf("residential", key, 4);
    now = 1500;
    exits.sweep();
    assert.equal(exits.size, 1, "the one used at 600 is kept");
  });
});

describe("tunnels", () => {
  it("an open tunnel is closed once the decider revokes its connection", async () => {
    const watched: { revoke?: () => void } = {};
    const decider: GatewayDecider = {
      connection: () => ({
        decide: async () => ({
          allow: true,
          subuser: "sub_a",
          product: "residential",
          lease: null,
          target,
          session: null,
        }),
        reach: () => null,
        useExit() {},
        watch(onRevoked) {
          watched.revoke = onRevoked;
        },
        close() {},
      }),
    };
    const upstream = net.createServer(() => {}).listen(0, "127.0.0.1");
    const gateway = createProxyServer({ decider, usage: { add() {} } }).listen(0, "127.0.0.1");
    await Promise.all([upstream, gateway].map((server) => new Promise((resolve) => server.once("listening", resolve))));
    try {
      const tunnel = await new Promise<{ status: number | undefined; socket: net.Socket }>((resolve) => {
        http
          .request({
            host: "127.0.0.1",
            port: (gateway.address() as AddressInfo).port,
            method: "CONNECT",
            path: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
            headers: {
              "Proxy-Authorization": `Basic ${Buffer.from("user_a-type-res-region-us:p").toString("base64")}`,
            },
          })
          .on("connect", (response, socket) => resolve({ status: response.statusCode, socket }))
          .end();
      });
      assert.equal(tunnel.status, 200);
      const closed = new Promise((resolve) => tunnel.socket.on("close", resolve));
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(watched.revoke, "the tunnel is watched");
      watched.revoke();
      await closed;
    } finally {
      upstream.close();
      gateway.close();
    }
  });
});

// The gateway's pure parts, without the API: `node --test gateway/test/units.test.ts`.
import assert from "node:assert/strict";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { type ApiClient, ConnectionAuth, type IspCredentials } from "../api-client.ts";
import { chooseExit, type ExitDecision } from "../exits.ts";
import { createProxyServer, type GatewayDecider } from "../proxy-server.ts";
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

  it("a sticky session keeps the pinned exit; unpinned it is derived from the session id", () => {
    const pinned: ExitDecision = { product: "residential", target: london, session: session("ses_1", "198.51.100.77") };
    assert.equal(chooseExit(pinned, { connectionSeed: "1" }).ip, "198.51.100.77");
    const fresh: ExitDecision = { ...pinned, session: session("ses_2", null) };
    assert.equal(chooseExit(fresh, { connectionSeed: "1" }).ip, chooseExit(fresh, { connectionSeed: "2" }).ip);
  });

  it("mobile exits are in TEST-NET-3 with a carrier; a repin moves the exit and says so", () => {
    const decision: ExitDecision = { product: "mobile", target: london, session: session("ses_3", "203.0.113.5") };
    const exit = chooseExit(decision, { connectionSeed: "9", repin: true });
    assert.match(exit.ip, /^203\.0\.113\.\d+$/);
    assert.equal(exit.repinned, exit.ip !== "203.0.113.5");
    assert.equal(typeof exit.carrier, "string");
    assert.equal(exit.geo, "gb/eng/london");
    assert.ok(exit.asn >= 64496 && exit.asn <= 64511);
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

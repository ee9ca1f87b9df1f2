// The gateway's pure parts, without the API: `node --test gateway/test/units.test.mjs`.
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { ConnectionAuth } from "../api-client.mjs";
import { chooseExit } from "../exits.mjs";
import { createProxyServer } from "../proxy-server.mjs";
import { usageReporter } from "../usage-reporter.mjs";

const quiet = { error() {} };
const allow = (lease, ttl = 30) => ({ allow: true, lease, cache_ttl_s: ttl, product: "residential" });

describe("usage reporter", () => {
  it("retries a failed batch with the same batch_id, gzip-compressed", async () => {
    const sent = [];
    let failuresLeft = 1;
    const api = {
      async reportUsage(gzipped) {
        sent.push(JSON.parse(gunzipSync(gzipped)));
        if (failuresLeft-- > 0) throw new Error("POST /usage: 503 ");
      },
    };
    const usage = usageReporter(api, { flushMs: 10, log: quiet });
    usage.add({ request_id: "req_1" });
    usage.add({ request_id: "req_2" });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await usage.drain();
    assert.equal(sent.length, 2);
    assert.equal(sent[0].batch_id, sent[1].batch_id);
    assert.deepEqual(
      sent[1].records.map((record) => record.request_id),
      ["req_1", "req_2"],
    );
  });

  it("splits records into batches of at most maxRecords, each with its own batch_id", async () => {
    const sent = [];
    const usage = usageReporter(
      { reportUsage: async (gzipped) => sent.push(JSON.parse(gunzipSync(gzipped))) },
      {
        flushMs: 10,
        maxRecords: 2,
        log: quiet,
      },
    );
    for (let i = 0; i < 5; i++) usage.add({ request_id: `req_${i}` });
    await usage.drain();
    assert.deepEqual(
      sent.map((batch) => batch.records.length),
      [2, 2, 1],
    );
    assert.equal(new Set(sent.map((batch) => batch.batch_id)).size, 3);
  });
});

describe("connection authorization", () => {
  function countingApi(decisions) {
    const api = { asked: 0, released: [] };
    api.authorize = async () => decisions[api.asked++];
    api.release = async (lease) => api.released.push(lease);
    return api;
  }
  const credentials = { username: "user_a-type-res-region-us", password: "p", product: "residential" };

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
    const auth = new ConnectionAuth({ authorize: async () => Promise.reject(new Error("down")) }, "127.0.0.1");
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
  const target = { region: "gb", state: "eng", city: "london", asn: null };

  it("a sticky session keeps the pinned exit; unpinned it is derived from the session id", () => {
    const pinned = { product: "residential", target, session: { id: "ses_1", exit_ip: "198.51.100.77" } };
    assert.equal(chooseExit(pinned, { connectionSeed: "1" }).ip, "198.51.100.77");
    const fresh = { ...pinned, session: { id: "ses_2", exit_ip: null } };
    assert.equal(chooseExit(fresh, { connectionSeed: "1" }).ip, chooseExit(fresh, { connectionSeed: "2" }).ip);
  });

  it("mobile exits are in TEST-NET-3 with a carrier; a repin moves the exit and says so", () => {
    const decision = { product: "mobile", target, session: { id: "ses_3", exit_ip: "203.0.113.5" } };
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
    const target = { region: "us", state: null, city: null, asn: null };
    let revoke = null;
    const decider = {
      connection: () => ({
        decide: async () => ({ allow: true, product: "residential", target, session: null }),
        useExit() {},
        watch(onRevoked) {
          revoke = onRevoked;
        },
        close() {},
      }),
    };
    const upstream = net.createServer(() => {}).listen(0, "127.0.0.1");
    const gateway = createProxyServer({ decider, usage: { add() {} } }).listen(0, "127.0.0.1");
    await Promise.all([upstream, gateway].map((server) => new Promise((resolve) => server.once("listening", resolve))));
    try {
      const tunnel = await new Promise((resolve) => {
        http
          .request({
            host: "127.0.0.1",
            port: gateway.address().port,
            method: "CONNECT",
            path: `127.0.0.1:${upstream.address().port}`,
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
      assert.equal(typeof revoke, "function", "the tunnel is watched");
      revoke();
      await closed;
    } finally {
      upstream.close();
      gateway.close();
    }
  });
});

// The node's own decisions against a stub API (no wrangler): `node --test gateway/test/node-decider.test.ts`.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import http from "node:http";
import type net from "node:net";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, it } from "node:test";
import type { Limits } from "../../src/platform/gateway-rules.ts";
import { keyHash, sessionKey, stickyExit } from "../../src/platform/sticky-sessions.ts";
import { type Clock, realClock, type TimerHandle } from "../clock.ts";
import { sha256Hex } from "../credentials.ts";
import type { LeaseOptions } from "../lease-manager.ts";
import { type NodeDecider, nodeDecider } from "../node-decider.ts";
import { createProxyServer, type GatewayConnection } from "../proxy-server.ts";
import { SnapshotCache } from "../snapshot-cache.ts";
import type {
  Allowed,
  GatewayDecision,
  GatewayPush,
  NodeAllowed,
  Refused,
  SubuserSnapshot,
  UsageRecord,
} from "../wire.ts";
import { proxiedGet } from "./harness.ts";
import { OWNER_TAG, snapshotOf, stubApi } from "./stub-api.ts";

const quiet = { error() {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const user = (name: string, segments = "type-res-region-us") => `user_${name}-${segments}`;
const exitsIn = (network: string) => Array.from({ length: 254 }, (_, i) => `${network}.${i + 1}`);
const residentialExits = exitsIn("198.51.100");
const mobileExits = exitsIn("203.0.113");

/** The refusal's code, or `ok` for an allow. */
const codeOf = (decision: GatewayDecision) => (decision.allow ? "ok" : decision.error_code);

function refusedOf(decision: GatewayDecision): Refused {
  if (decision.allow) assert.fail(`admitted: ${JSON.stringify(decision)}`);
  return decision;
}

function allowedOf(decision: GatewayDecision): Allowed {
  if (!decision.allow) assert.fail(`refused: ${decision.error_code}`);
  return decision;
}

/** The node's own allow (not `authorize`'s). */
function nodeAllowedOf(decision: GatewayDecision): NodeAllowed {
  const allowed = allowedOf(decision);
  if ("cache_ttl_s" in allowed) assert.fail("an authorize decision");
  return allowed;
}

let deciders: NodeDecider[] = [];
afterEach(() => {
  for (const decider of deciders) decider.close();
  deciders = [];
});

/** A decider on a stub API; `clock.at` moves its time (lease and session times follow it). */
function setup({
  leaseOptions = { renewEveryMs: 50, idleMs: 150, maxLeaseMs: 400, renewBeforeMs: 300, growEveryMs: 250 },
}: {
  leaseOptions?: LeaseOptions;
} = {}) {
  const clock = { at: Date.now(), started: Date.now() };
  const now = () => clock.at + (Date.now() - clock.started);
  const api = stubApi({ now });
  const decider = nodeDecider({ api, clock: { ...realClock, now }, feed: false, log: quiet, leaseOptions });
  deciders.push(decider);
  return { api, decider, clock };
}

const ask = (
  connection: GatewayConnection,
  name: string,
  { password = "secret", segments }: { password?: string; segments?: string } = {},
) => connection.decide({ username: user(name, segments), password, product: "residential" });

describe("the node decider: credentials and state", () => {
  it("refuses a username the grammar refuses with its 400 code, asking nothing", async () => {
    const { api, decider } = setup();
    const connection = decider.connection("127.0.0.1");
    assert.deepEqual(
      await connection.decide({ username: "user_abc-type-res", password: "x", product: "residential" }),
      {
        allow: false,
        status: 400,
        error_code: "bad-username",
      },
    );
    const decision = await ask(connection, "abc", { segments: "type-res-region-xx" });
    assert.equal(codeOf(decision), "unknown-region");
    assert.equal(api.calls.subusers.length, 0);
  });

  it("admits with the target parsed at the node and the snapshot's sub-user", async () => {
    const { api, decider } = setup();
    api.add(snapshotOf("s1"));
    const decision = await ask(decider.connection("127.0.0.1"), "s1", {
      segments: "type-res-region-us-state-ca-city-la",
    });
    assert.deepEqual(decision, {
      allow: true,
      subuser: "sub_s1",
      product: "residential",
      lease: null,
      target: { type: "res", region: "us", state: "ca", city: "la", asn: null, session_id: null, sesstime: null },
      session: null,
      account: "usr_01JAAAAAAAAAAAAAAAAAAAAAAA",
      owner_tag: null,
      // The snapshot has no target rules: the allow carries them as null (anywhere).
      target_rules: null,
    });
  });

  it("fetches a sub-user once for concurrent first requests, and warm credentials ask nothing", async () => {
    const { api, decider } = setup();
    api.add(snapshotOf("s1"));
    api.add(snapshotOf("s2"));
    const first = await Promise.all(
      Array.from({ length: 50 }, (_, i) => ask(decider.connection("127.0.0.1"), i % 2 ? "s1" : "s2")),
    );
    assert.ok(first.every((decision) => decision.allow));
    assert.deepEqual(api.calls.subusers, [["s2", "s1"]]);
    for (let i = 0; i < 100; i++) assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true);
    assert.equal(api.calls.subusers.length, 1);
    assert.equal(api.calls.leases.length, 0, "no limits, no lease");
  });

  it("remembers unknown names (one call), and forgets one when a push names it", async () => {
    const { api, decider } = setup();
    const connection = decider.connection("127.0.0.1");
    for (let i = 0; i < 3; i++) assert.equal(codeOf(await ask(connection, "s9")), "auth-failed");
    assert.equal(api.calls.subusers.length, 1);
    const created = api.add(snapshotOf("s9"));
    decider.push({ type: "subuser", subuser: created });
    assert.equal((await ask(connection, "s9")).allow, true);
    assert.equal(api.calls.subusers.length, 2);
  });

  it("throttles a source past 20 failed credentials in 10 s (429 auth-throttled), others unaffected", async () => {
    const { api, decider, clock } = setup();
    api.add(snapshotOf("s1"));
    const guesser = decider.connection("192.0.2.1");
    for (let i = 0; i < 20; i++) {
      assert.equal(refusedOf(await ask(guesser, "s1", { password: `guess${i}` })).status, 407);
    }
    const throttled = refusedOf(await ask(guesser, "s1"));
    assert.deepEqual([throttled.status, throttled.error_code], [429, "auth-throttled"]);
    const retryAfterS = throttled.retry_after_s ?? 0;
    assert.ok(retryAfterS >= 1 && retryAfterS <= 10);
    assert.equal((await ask(decider.connection("192.0.2.2"), "s1")).allow, true);
    clock.at += 10_001;
    assert.equal((await ask(guesser, "s1")).allow, true);
  });

  it("keeps the contract's order: credentials, status, product, pool, cap", async () => {
    const { api, decider } = setup();
    const month = new Date().toISOString().slice(0, 7);
    const cases: Array<[SubuserSnapshot, string, [number, string] | null]> = [
      [snapshotOf("s1", { status: "disabled" }), "wrong", [407, "auth-failed"]],
      [snapshotOf("s2", { status: "disabled" }), "secret", [403, "subuser-disabled"]],
      [snapshotOf("s3", { status: "deleted" }), "secret", [407, "auth-failed"]],
      [snapshotOf("s4", { products: ["mobile"], status: "disabled" }), "secret", [403, "subuser-disabled"]],
      [
        snapshotOf("s5", { products: ["mobile"], exhausted: { residential: true } }),
        "secret",
        [403, "product-not-allowed"],
      ],
      [
        snapshotOf("s6", { exhausted: { residential: true }, cap: { month, reached: true } }),
        "secret",
        [402, "bandwidth-exhausted"],
      ],
      [snapshotOf("s7", { exhausted: { mobile: false } }), "secret", [402, "bandwidth-exhausted"]],
      [snapshotOf("s8", { cap: { month, reached: true } }), "secret", [402, "traffic-limit-reached"]],
      [snapshotOf("s9", { cap: { month: "2020-01", reached: true } }), "secret", null],
    ];
    for (const [snapshot, password, expected] of cases) {
      api.add(snapshot);
      const decision = await ask(decider.connection("127.0.0.1"), snapshot.name, { password });
      assert.deepEqual(decision.allow ? null : [decision.status, decision.error_code], expected, snapshot.name);
    }
  });

  it("a daily cap refuses on its UTC day only: the snapshot of a day reached lets requests through from 00:00 UTC, with no push; a lifetime cap refuses whatever the day", async () => {
    const { api, decider, clock } = setup();
    clock.at = Date.UTC(2026, 10, 28, 23, 59, 59);
    api.add(snapshotOf("s1", { day_cap: { day: "2026-11-28", reached: true } }));
    api.add(snapshotOf("s2", { lifetime_cap_reached: true }));
    const codes = async () => [
      codeOf(await ask(decider.connection("127.0.0.1"), "s1")),
      codeOf(await ask(decider.connection("127.0.0.1"), "s2")),
    ];
    assert.deepEqual(await codes(), ["daily-limit-reached", "lifetime-limit-reached"]);
    clock.at = Date.UTC(2026, 10, 29, 0, 0, 1);
    assert.deepEqual(await codes(), ["ok", "lifetime-limit-reached"]);
    assert.deepEqual(api.calls.subusers.flat().sort(), ["s1", "s2"], "decided from the snapshots fetched on the 28th");
  });

  it("a rotated-out password works until its `until`, then 407 (and its connections are re-checked then)", async () => {
    const { api, decider } = setup();
    const until = new Date(Date.now() + 300).toISOString();
    api.add(
      snapshotOf("s1", {
        passwords: [
          { sha256: sha256Hex("new"), until: null },
          { sha256: sha256Hex("old"), until },
        ],
      }),
    );
    const connection = decider.connection("127.0.0.1");
    assert.equal((await ask(connection, "s1", { password: "old" })).allow, true);
    let revoked = false;
    connection.watch(() => {
      revoked = true;
    });
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1", { password: "new" })).allow, true);
    await sleep(400);
    assert.equal(revoked, true, "the tunnel using the old password is closed at its until");
    assert.equal(codeOf(await ask(connection, "s1", { password: "old" })), "auth-failed");
    assert.equal((await ask(connection, "s1", { password: "new" })).allow, true);
  });

  it("with no password, the source must be on the whitelist for the product (407 not-whitelisted)", async () => {
    const { api, decider } = setup();
    api.add(snapshotOf("s1", { whitelist: [{ product: "residential", ip: "198.51.100.0/24" }] }));
    assert.equal((await ask(decider.connection("198.51.100.9"), "s1", { password: "" })).allow, true);
    const refused = refusedOf(await ask(decider.connection("198.51.101.9"), "s1", { password: "" }));
    assert.deepEqual([refused.status, refused.error_code], [407, "not-whitelisted"]);
    const mobile = await decider.connection("198.51.100.9").decide({
      username: user("s1", "type-mob-region-us"),
      password: "",
      product: "mobile",
    });
    assert.equal(codeOf(mobile), "not-whitelisted");
  });

  it("a push re-checks open connections at once: disabled, whitelist removed; a lower version is ignored", async () => {
    const { api, decider } = setup();
    const snapshot = api.add(snapshotOf("s1", { whitelist: [{ product: "residential", ip: "198.51.100.9" }] }));
    const byPassword = decider.connection("127.0.0.1");
    const byWhitelist = decider.connection("198.51.100.9");
    assert.equal((await ask(byPassword, "s1")).allow, true);
    assert.equal((await ask(byWhitelist, "s1", { password: "" })).allow, true);
    const closed: string[] = [];
    byPassword.watch(() => closed.push("password"));
    byWhitelist.watch(() => closed.push("whitelist"));

    decider.push({ type: "subuser", subuser: { ...snapshot, version: 2, whitelist: [] } });
    assert.deepEqual(closed, ["whitelist"]);
    assert.equal(codeOf(await ask(byWhitelist, "s1", { password: "" })), "not-whitelisted");

    decider.push({ type: "subuser", subuser: { ...snapshot, version: 1, status: "disabled" } });
    assert.equal((await ask(byPassword, "s1")).allow, true, "an older version changes nothing");
    decider.push({ type: "subuser", subuser: { ...snapshot, version: 3, status: "disabled" } });
    assert.deepEqual(closed, ["whitelist", "password"]);
    assert.equal(codeOf(await ask(byPassword, "s1")), "subuser-disabled");
  });

  it("decides a sticky session with no call: two nodes on one snapshot give the same exit", async () => {
    const api = stubApi();
    api.add(snapshotOf("s1"));
    const [one, two] = [1, 2].map(() => {
      const decider = nodeDecider({ api, feed: false, log: quiet });
      deciders.push(decider);
      return decider;
    });
    assert.ok(one && two);
    const segments = "type-res-region-us-session-abc-sesstime-10";
    const decisions = await Promise.all(
      [one, two, one, two].map((decider) => ask(decider.connection("127.0.0.1"), "s1", { segments })),
    );
    const key = sessionKey(user("s1", segments));
    const exit = stickyExit(residentialExits, key, 0);
    assert.match(exit ?? "", /^198\.51\.100\.\d+$/);
    for (const decision of decisions.map(allowedOf)) {
      assert.deepEqual(decision.session, { key, generation: 0, exit_ip: exit, repinned: false });
    }
    assert.deepEqual(api.calls.subusers, [["s1"], ["s1"]], "one snapshot fetch a node");
    assert.deepEqual(api.calls.leases, []);
    assert.deepEqual(Object.keys(api.calls).sort(), ["leases", "subusers"], "the stub has no sessions call");
    const other = nodeAllowedOf(
      await ask(one.connection("127.0.0.1"), "s1", { segments: "type-res-region-us-session-abd-sesstime-10" }),
    );
    assert.equal(other.session?.generation, 0);
    const rotating = nodeAllowedOf(await ask(one.connection("127.0.0.1"), "s1"));
    assert.equal(rotating.session, null);
  });

  it("a snapshot with the key's next generation changes the next request's exit at once", async () => {
    const { api, decider } = setup();
    const snapshot = api.add(snapshotOf("s1"));
    const segments = "type-mob-region-de-session-x1-sesstime-30";
    const mobile = (connection: GatewayConnection) =>
      connection.decide({ username: user("s1", segments), password: "secret", product: "mobile" });
    const connection = decider.connection("127.0.0.1");
    const first = nodeAllowedOf(await mobile(connection)).session;
    const key = sessionKey(user("s1", segments));
    assert.equal(first?.exit_ip, stickyExit(mobileExits, key, 0));

    decider.push({ type: "subuser", subuser: { ...snapshot, version: 2, generations: { [keyHash(key)]: 1 } } });
    const next = nodeAllowedOf(await mobile(connection)).session;
    assert.equal(next?.generation, 1);
    assert.equal(next?.exit_ip, stickyExit(mobileExits, key, 1));
    assert.notEqual(next?.exit_ip, first?.exit_ip);
    assert.equal(next?.repinned, false, "a new session, not a repin");
    assert.deepEqual(nodeAllowedOf(await mobile(decider.connection("127.0.0.1"))).session, next, "and keeps it");

    // A node that missed the push gets the generation on its next fetch (here: a fresh node).
    api.add({ ...snapshot, version: 2, generations: { [keyHash(key)]: 1 } });
    const elsewhere = nodeDecider({ api, feed: false, log: quiet });
    deciders.push(elsewhere);
    assert.equal(nodeAllowedOf(await mobile(elsewhere.connection("127.0.0.1"))).session?.exit_ip, next?.exit_ip);
  });

  it("a repin takes the exit out of this node's pool: that request says repinned, later ones keep the new exit", async () => {
    const { api, decider } = setup();
    api.add(snapshotOf("s1"));
    const username = user("s1", "type-res-region-us-session-r1-sesstime-5");
    const decide = (repin = false) =>
      decider.connection("127.0.0.1").decide({ username, password: "secret", product: "residential", repin });
    const first = nodeAllowedOf(await decide()).session;
    const moved = nodeAllowedOf(await decide(true)).session;
    assert.ok(first && moved);
    assert.notEqual(moved.exit_ip, first.exit_ip);
    assert.equal(moved.repinned, true);
    // The rule over the exits left: the pool without the lost exit.
    const left = residentialExits.filter((ip) => ip !== first.exit_ip);
    assert.equal(moved.exit_ip, stickyExit(left, sessionKey(username), 0));
    const later = nodeAllowedOf(await decide()).session;
    assert.deepEqual(later, { ...moved, repinned: false });
  });

  it("the allow carries the snapshot's account and owner tag", async () => {
    const { api, decider } = setup();
    api.add(snapshotOf("s1", { owner_tag: OWNER_TAG }));
    const decision = nodeAllowedOf(await ask(decider.connection("127.0.0.1"), "s1"));
    assert.deepEqual(
      [decision.subuser, decision.account, decision.owner_tag],
      ["sub_s1", "usr_01JAAAAAAAAAAAAAAAAAAAAAAA", OWNER_TAG],
    );
  });

  it("503 auth-unavailable when the API cannot be asked, and for a snapshot unconfirmed for 30 s", async () => {
    const { api, decider, clock } = setup();
    api.add(snapshotOf("s1"));
    api.down = true;
    assert.equal(codeOf(await ask(decider.connection("127.0.0.1"), "s1")), "auth-unavailable");
    api.down = false;
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true);
    clock.at += 31_000;
    assert.equal(codeOf(await ask(decider.connection("127.0.0.1"), "s1")), "auth-unavailable");
    await decider.snapshots.refresh();
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true);
  });
});

describe("the proxy in front of a node decider: sticky exits and usage records", () => {
  /** A proxy on a node decider over `api`, a loopback target, and the usage records the proxy reports. */
  async function proxy(api: ReturnType<typeof stubApi>) {
    const decider = nodeDecider({ api, feed: false, log: quiet });
    deciders.push(decider);
    const records: UsageRecord[] = [];
    const gateway = createProxyServer({ decider, usage: { add: (record) => records.push(record) } });
    const target = http.createServer((_request, response) => response.end("hello\n"));
    const portOf = (server: net.Server) => (server.address() as AddressInfo).port;
    await Promise.all(
      [gateway, target].map((server) => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(null)))),
    );
    servers.push(gateway, target);
    const get = async (username: string, headers: Record<string, string> = {}) => {
      const before = records.length;
      const answer = await proxiedGet(portOf(gateway), {
        username,
        password: "secret",
        url: `http://127.0.0.1:${portOf(target)}/`,
        headers,
      });
      assert.equal(answer.status, 200);
      await eventually(() => records.length > before);
      return { headers: answer.headers, record: records[before] as UsageRecord };
    };
    return { get, records };
  }
  const servers: net.Server[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });

  it("a repin says repinned in the header and the record; the session keeps the new exit", async () => {
    const api = stubApi();
    api.add(snapshotOf("s1", { owner_tag: OWNER_TAG }));
    const { get } = await proxy(api);
    const username = user("s1", "type-mob-region-de-session-m1-sesstime-30");
    const first = await get(username);
    assert.equal(first.headers["x-gateway-exit-ip"], stickyExit(mobileExits, sessionKey(username), 0));
    assert.equal(first.headers["x-gateway-repinned"], "false");
    const moved = await get(username, { "X-Simulate-Repin": "true" });
    assert.notEqual(moved.headers["x-gateway-exit-ip"], first.headers["x-gateway-exit-ip"]);
    assert.equal(moved.headers["x-gateway-repinned"], "true");
    assert.deepEqual([moved.record.repinned, moved.record.exit_ip], [true, moved.headers["x-gateway-exit-ip"]]);
    const later = await get(username);
    assert.equal(later.headers["x-gateway-exit-ip"], moved.headers["x-gateway-exit-ip"]);
    assert.deepEqual([later.headers["x-gateway-repinned"], later.record.repinned], ["false", false]);
  });

  it("records name the generation of a sticky request (no session id) and the signed owner", async () => {
    const api = stubApi();
    const username = user("s1", "type-res-region-us-session-k1-sesstime-10");
    const key = sessionKey(username);
    api.add(snapshotOf("s1", { owner_tag: OWNER_TAG, generations: { [keyHash(key)]: 3 } }));
    api.add(snapshotOf("s2"));
    const { get } = await proxy(api);
    const owner = { subuser: "sub_s1", account: "usr_01JAAAAAAAAAAAAAAAAAAAAAAA", owner_tag: OWNER_TAG };

    const sticky = (await get(username)).record;
    assert.equal(sticky.exit_ip, stickyExit(residentialExits, key, 3));
    assert.deepEqual(pick(sticky, ["session", "session_gen", ...OWNER]), { session_gen: 3, ...owner });
    const rotating = (await get(user("s1"))).record;
    assert.deepEqual(pick(rotating, ["session", "session_gen", ...OWNER]), owner);
    // Not signed (`owner_tag` null): the record names no owner.
    const unsigned = (await get(user("s2", "type-res-region-us-session-k1-sesstime-10"))).record;
    assert.deepEqual(pick(unsigned, ["session", "session_gen", ...OWNER]), { session_gen: 0 });
    assert.equal(api.calls.leases.length, 0);
  });
});

const OWNER = ["subuser", "account", "owner_tag"] as const;
/** The fields of `record` among `names` that it has. */
function pick(record: UsageRecord, names: ReadonlyArray<keyof UsageRecord>) {
  return Object.fromEntries(names.filter((name) => record[name] !== undefined).map((name) => [name, record[name]]));
}

describe("the node decider: limits and leases", () => {
  const limited = (name: string, limits: Limits) =>
    snapshotOf(name, { limits: { residential: limits, mobile: { concurrent: null, rps: null } } });

  it("every request counts against the rps share, keep-alive ones too (429 rps-limit, 30002, Retry-After)", async () => {
    const { api, decider } = setup();
    api.add(limited("s1", { concurrent: null, rps: 3 }));
    const connection = decider.connection("127.0.0.1");
    const answers: GatewayDecision[] = [];
    for (let i = 0; i < 5; i++) answers.push(await ask(connection, "s1"));
    assert.deepEqual(
      answers.map((decision) => decision.allow),
      [true, true, true, false, false],
    );
    const over = refusedOf(answers[3] as GatewayDecision);
    assert.deepEqual(
      [over.status, over.error_code, over.service_code, over.retry_after_s],
      [429, "rps-limit", 30002, 1],
    );
    await sleep(1000);
    assert.equal((await ask(connection, "s1")).allow, true);
  });

  it("a share outgrown by demand is grown at once while below the limit (no wait for the next renewal)", async () => {
    const { api, decider } = setup({ leaseOptions: { renewEveryMs: 60_000, growEveryMs: 250 } });
    api.add(limited("s1", { concurrent: 2, rps: 20 }));
    const connection = decider.connection("127.0.0.1");
    const answers: string[] = [];
    for (let i = 0; i < 25; i++) answers.push(codeOf(await ask(connection, "s1")));
    assert.deepEqual(answers, [...Array(20).fill("ok"), ...Array(5).fill("rps-limit")]);
    assert.deepEqual(
      api.calls.leases.map(([lease]) => lease?.want.rps),
      // Demand: the last quarter second's attempts four times over (1, then 11), a fifth more and five; capped at 20.
      [10, 20],
      "the first share, then one call to grow it (then the limit is reached)",
    );
  });

  it("open connections stay within the concurrent share; closing one frees its place", async () => {
    const { api, decider } = setup();
    api.add(limited("s1", { concurrent: 2, rps: null }));
    const [a, b, c] = [
      decider.connection("127.0.0.1"),
      decider.connection("127.0.0.1"),
      decider.connection("127.0.0.1"),
    ];
    const answers = await Promise.all([a, b, c].map((connection) => ask(connection, "s1")));
    assert.deepEqual(answers.map(codeOf), ["ok", "ok", "concurrent-limit"]);
    assert.equal((await ask(a, "s1")).allow, true, "a further request on an open connection is no new connection");
    a.close();
    assert.equal((await ask(c, "s1")).allow, true);
    assert.equal(api.calls.leases.length, 1, "one lease call for the three first requests");
  });

  it("a connection closed while its first request was decided holds no place", async () => {
    const { api, decider } = setup();
    api.add(limited("s1", { concurrent: 1, rps: null }));
    const leaving = decider.connection("127.0.0.1");
    const decided = ask(leaving, "s1");
    leaving.close();
    assert.equal((await decided).allow, true);
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true);
  });

  it("renews the shares in use before they end, all in one call, with the demand; lets unused ones end", async () => {
    const { api, decider } = setup();
    api.add(limited("s1", { concurrent: 5, rps: 10 }));
    api.add(limited("s2", { concurrent: 5, rps: null }));
    const one = decider.connection("127.0.0.1");
    const two = decider.connection("127.0.0.1");
    await Promise.all([ask(one, "s1"), ask(two, "s2")]);
    assert.equal(api.calls.leases.length, 1);
    assert.equal(api.calls.leases[0]?.length, 2);
    await sleep(160);
    const renewal = api.calls.leases[1] ?? [];
    assert.deepEqual(
      renewal.map((lease) => [lease.name, lease.open, lease.want]),
      [
        ["s1", 1, { concurrent: 5, rps: 10 }],
        ["s2", 1, { concurrent: 5, rps: 0 }],
      ],
    );
    assert.deepEqual(renewal[0]?.held, { concurrent: 5, rps: 10 }, "the first share: the demand, with room");
    assert.equal(renewal[0]?.recent, 1);

    one.close();
    two.close();
    await sleep(300); // unused once idle for 150 ms
    const calls = api.calls.leases.length;
    await sleep(500);
    assert.equal(api.calls.leases.length, calls, "unused shares are not renewed");
    assert.ok(
      api.calls.leases.flat().every((lease) => lease.want.concurrent > 0),
      "nor given back by a call",
    );
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true, "a share is asked for afresh");
  });

  it("a cut pushed by the gate renews at once: an unused share is given back", async () => {
    const { api, decider } = setup({ leaseOptions: { renewEveryMs: 60_000, idleMs: 50 } });
    api.add(limited("s1", { concurrent: 5, rps: 10 }));
    const connection = decider.connection("127.0.0.1");
    assert.equal((await ask(connection, "s1")).allow, true);
    connection.close();
    await sleep(80);
    decider.push({ type: "lease_cut", name: "s1", product: "residential" });
    await sleep(20);
    assert.equal(api.calls.leases.length, 2);
    assert.deepEqual(api.calls.leases[1]?.[0]?.want, { concurrent: 0, rps: 0 });
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true, "asked for afresh");
    assert.equal(api.calls.leases.length, 3);
  });

  it("keeps deciding within its lease while renewals fail, then refuses 503 (fail closed)", async () => {
    const { api, decider } = setup();
    api.add(limited("s1", { concurrent: 5, rps: 100 }));
    const connection = decider.connection("127.0.0.1");
    assert.equal((await ask(connection, "s1")).allow, true);
    api.down = true;
    await sleep(150);
    assert.equal((await ask(connection, "s1")).allow, true, "within the lease");
    await sleep(400);
    assert.equal(codeOf(await ask(connection, "s1")), "auth-unavailable");
  });

  it("fetches the snapshot again when a lease names a newer version (a missed push)", async () => {
    const { api, decider } = setup();
    const snapshot = api.add(limited("s1", { concurrent: 5, rps: 100 }));
    const connection = decider.connection("127.0.0.1");
    assert.equal((await ask(connection, "s1")).allow, true);
    api.add({ ...snapshot, version: 2, status: "disabled" });
    api.gateVersion.set("s1", 2);
    // The next lease renewal names version 2 (within ~100 ms here); a loaded machine may take longer.
    let code = null;
    for (const until = Date.now() + 3000; code !== "subuser-disabled" && Date.now() < until; await sleep(50)) {
      code = codeOf(await ask(connection, "s1"));
    }
    assert.equal(code, "subuser-disabled");
  });
});

/**
 * A clock whose time moves only when the test advances it: its timers fire in order of their due times as it does
 * (a turn's `setImmediate` is the real one: it takes no time).
 */
function simulatedClock() {
  let at = Date.parse("2026-01-01T00:00:00.000Z");
  let nextId = 1;
  const timers = new Map<number, { due: number; every: number | null; callback: () => void }>();
  const add = (callback: () => void, ms: number, every: number | null) => {
    const id = nextId++;
    timers.set(id, { due: at + ms, every, callback });
    return id;
  };
  const clear = (id: TimerHandle | null | undefined) => {
    if (typeof id === "number") timers.delete(id);
  };
  const clock: Clock = {
    now: () => at,
    setTimeout: (callback, ms) => add(callback, ms, null),
    clearTimeout: clear,
    setInterval: (callback, ms) => add(callback, ms, ms),
    clearInterval: clear,
    setImmediate: (callback) => {
      setImmediate(callback);
    },
  };
  /** Moves the time `ms` on, running each timer due meanwhile (and what it awaits) at its due time. */
  async function advance(ms: number): Promise<void> {
    const until = at + ms;
    for (;;) {
      const [id, timer] = [...timers].filter(([, t]) => t.due <= until).sort(([, a], [, b]) => a.due - b.due)[0] ?? [];
      if (id === undefined || !timer) break;
      at = timer.due;
      if (timer.every === null) timers.delete(id);
      else timer.due += timer.every;
      timer.callback();
      await new Promise((resolve) => setImmediate(resolve));
    }
    at = until;
  }
  return { clock, advance };
}

describe("the node decider on a simulated clock", () => {
  it("renews a share in use before it ends as the clock's time passes, with no real wait", async () => {
    const { clock, advance } = simulatedClock();
    const api = stubApi({ now: clock.now });
    api.add(snapshotOf("s1", { limits: { residential: { concurrent: 5, rps: 100 } } }));
    const decider = nodeDecider({ api, clock, feed: false, log: quiet });
    deciders.push(decider);
    const started = performance.now();
    assert.equal((await ask(decider.connection("127.0.0.1"), "s1")).allow, true);
    assert.equal(api.calls.leases.length, 1, "the first share");
    // The share lasts 5 s; it is renewed 2.5 s before it ends, looked at every second.
    await advance(2000);
    assert.equal(api.calls.leases.length, 1);
    await advance(1000);
    assert.equal(api.calls.leases.length, 2, "renewed at 3 s");
    await advance(60_000);
    assert.equal(codeOf(await ask(decider.connection("127.0.0.1"), "s1")), "ok", "still in force a minute on");
    assert.ok(performance.now() - started < 1000, "no real wait");
  });
});

describe("the snapshot cache", () => {
  it("asks for names met in the same turn in one call, and keeps at most maxUnknown unknown names", async () => {
    const asked: string[][] = [];
    const cache = new SnapshotCache({
      fetch: async (names) => {
        asked.push(names);
        const known = names.filter((name) => name === "s1");
        return { subusers: known.map((name) => snapshotOf(name)), unknown: names.filter((name) => name !== "s1") };
      },
      maxUnknown: 2,
    });
    const found = await Promise.all(["s1", "u1", "u2", "s1"].map((name) => cache.get(name)));
    assert.deepEqual(
      found.map((snapshot) => snapshot?.name ?? null),
      ["s1", null, null, "s1"],
    );
    assert.deepEqual(asked, [["s1", "u1", "u2"]]);
    await cache.get("u3");
    assert.equal(await cache.get("u3"), null);
    await cache.get("u1"); // forgotten first: asked again
    assert.deepEqual(asked.slice(1), [["u3"], ["u1"]]);
  });
});

/** A WebSocket server just big enough for the change feed: it accepts, sends text frames and drops connections. */
function feedServer() {
  const upgrades: Array<{ url: string | undefined; authorization: string | undefined; socket: Socket }> = [];
  const server = http.createServer();
  server.on("upgrade", (request: http.IncomingMessage, socket: Socket) => {
    const accept = createHash("sha1")
      .update(`${request.headers["sec-websocket-key"]}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest("base64");
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    socket.on("error", () => {});
    upgrades.push({ url: request.url, authorization: request.headers.authorization, socket });
  });
  const send = (socket: Socket, message: GatewayPush) => {
    const payload = Buffer.from(JSON.stringify(message));
    const length = Buffer.alloc(2);
    length.writeUInt16BE(payload.length);
    // A text frame, its length in the 16 bits after the marker 126 (pushes are longer than 125 bytes).
    socket.write(Buffer.concat([Buffer.from([0x81, 126]), length, payload]));
  };
  return new Promise<{ server: http.Server; upgrades: typeof upgrades; send: typeof send; port: number }>((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, upgrades, send, port: (server.address() as AddressInfo).port }),
    ),
  );
}

describe("the change feed", () => {
  it("opens with the gateway token, applies pushes, and reconnects (refetching held snapshots) when dropped", async () => {
    const feed = await feedServer();
    const api = stubApi();
    api.changes = () => ({
      url: `ws://127.0.0.1:${feed.port}/internal/gateway/changes?node=node-1`,
      headers: { Authorization: "Bearer gateway-token" },
    });
    const snapshot = api.add(snapshotOf("s1"));
    const decider = nodeDecider({ api, log: quiet });
    deciders.push(decider);
    try {
      const connection = decider.connection("127.0.0.1");
      assert.equal((await ask(connection, "s1")).allow, true);
      await eventually(() => feed.upgrades.length === 1);
      assert.deepEqual(
        [feed.upgrades[0]?.url, feed.upgrades[0]?.authorization],
        ["/internal/gateway/changes?node=node-1", "Bearer gateway-token"],
      );
      const [opened] = feed.upgrades;
      assert.ok(opened);
      feed.send(opened.socket, { type: "subuser", subuser: { ...snapshot, version: 2, status: "disabled" } });
      await eventually(async () => codeOf(await ask(connection, "s1")) === "subuser-disabled");

      const fetchedBefore = api.calls.subusers.length;
      api.add({ ...snapshot, version: 3, status: "active" }); // changed while the feed is down: the push is missed
      opened.socket.destroy();
      await eventually(() => feed.upgrades.length === 2);
      await eventually(() => api.calls.subusers.length > fetchedBefore);
      await eventually(async () => (await ask(connection, "s1")).allow);
    } finally {
      decider.close();
      for (const { socket } of feed.upgrades) socket.destroy();
      feed.server.close();
    }
  });
});

async function eventually(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await sleep(20);
  }
}

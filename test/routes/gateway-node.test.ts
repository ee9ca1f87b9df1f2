import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SubuserGateClient } from "../../src/durable-objects/subuser-gate";
import { MINUTE } from "../../src/platform/clock";
import { sha256Hex } from "../../src/platform/crypto";
import { STANDING_GRACE_MS, standingShare } from "../../src/platform/standing-shares";
import { keyHash, sessionIdAt, sessionKey } from "../../src/platform/sticky-sessions";
import { createAccount } from "../helpers/accounts";
import { subscribeChanges } from "../helpers/change-feed";
import { ADMIN_TOKEN, call, env, GATEWAY_TOKEN, gateway, json, nodeToken } from "../helpers/http";
import { authorize, createSubuser, gateOf, username } from "../helpers/subusers";

const NODE = "node-1";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const renew = async (lease: Record<string, unknown>, node = NODE, slot: number | null = null) =>
  (await json(await gateway("/leases", { node, slot, leases: [lease] }))).leases[0];

/** Ends a quiet sub-user's standing shares (a renewal asking for nothing) and waits until no node may use them. */
async function leaseFromNowOn(name: string): Promise<void> {
  await renew(busy(name, { concurrent: 0, rps: 0 }), "node-0");
  await sleep(STANDING_GRACE_MS + 50);
}

const busy = (name: string, want: { concurrent: number; rps: number }, held = { concurrent: 0, rps: 0 }) => ({
  name,
  product: "residential",
  held,
  open: 0,
  recent: 0,
  want,
});

describe("deciding at the node: snapshots, leased shares, sessions and pushes (docs/gateway.md)", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a snapshot carries what a node decides from; unknown and sandbox names are listed as unknown", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 5, concurrent_max: 3 });
    const response = await gateway("/subusers", { node: NODE, names: [subuser.name, "nosuchname", "t0000sandbox"] });
    // Password hashes: never cached on the way.
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const body = await json(response);
    expect(body.unknown.sort()).toEqual(["nosuchname", "t0000sandbox"]);
    const [snapshot] = body.subusers;
    expect(snapshot).toMatchObject({
      name: subuser.name,
      subuser: subuser.id,
      status: "active",
      products: ["residential"],
      passwords: [{ sha256: await sha256Hex(subuser.password), until: null }],
      whitelist: [],
      limits: { residential: { concurrent: 3, rps: 5 } },
      exhausted: { residential: false },
      cap: { month: new Date().toISOString().slice(0, 7), reached: false },
    });
    expect(snapshot.version).toBeGreaterThan(0);
  });

  it("requires the gateway token, and bounds what it is asked", async () => {
    const anonymous = await call("POST", "/internal/gateway/subusers", { body: { node: NODE, names: ["x"] } });
    expect(anonymous.status).toBe(401);
    const tooMany = await gateway("/subusers", { node: NODE, names: Array.from({ length: 101 }, (_, i) => `n${i}`) });
    expect(tooMany.status).toBe(422);
    const badNode = await call("POST", "/internal/gateway/subusers", {
      token: await nodeToken(NODE),
      body: { node: "Bad Node", names: ["x"] },
    });
    expect(badNode.status).toBe(422);
  });

  it("shares of rps_max and concurrent_max never sum past the limits across nodes, and move to demand", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 5, concurrent_max: 3 });
    await leaseFromNowOn(subuser.name);
    const first = await renew(busy(subuser.name, { concurrent: 3, rps: 5 }), "node-a");
    expect(first).toMatchObject({ known: true, concurrent: 3, rps: 5 });
    // Everything is leased to node-a: node-b gets nothing yet.
    const waiting = await renew(busy(subuser.name, { concurrent: 3, rps: 5 }), "node-b");
    expect(waiting).toMatchObject({ concurrent: 0, rps: 0 });
    // node-a renews: it is cut to its fair share, and once it enforces that, node-b gets the rest.
    const cut = await renew(busy(subuser.name, { concurrent: 3, rps: 5 }, { concurrent: 3, rps: 5 }), "node-a");
    expect(cut.concurrent + cut.rps).toBeLessThan(8);
    await renew(busy(subuser.name, { concurrent: 3, rps: 5 }, { concurrent: cut.concurrent, rps: cut.rps }), "node-a");
    await new Promise((resolve) => setTimeout(resolve, 1100)); // requests made under the old share age out
    await renew(busy(subuser.name, { concurrent: 3, rps: 5 }, { concurrent: cut.concurrent, rps: cut.rps }), "node-a");
    const given = await renew(busy(subuser.name, { concurrent: 3, rps: 5 }), "node-b");
    expect(given.concurrent).toBe(3 - cut.concurrent);
    expect(given.rps).toBe(5 - cut.rps);
    expect(given.concurrent).toBeGreaterThan(0);
    expect(given.version).toBeGreaterThan(0);
  });

  it("each connected node holds a slot of its own, even connecting at once; a freed slot waits out the grace", async () => {
    // Four nodes connecting at once: each gets a slot of its own.
    const held = await Promise.all(["slot-a", "slot-b", "slot-c", "slot-d"].map((name) => subscribeChanges(name)));
    const slots = held.map((node) => node.hello.slot);
    expect(held[0]?.hello).toMatchObject({ type: "hello", slots: 4 });
    expect(new Set(slots).size).toBe(4);
    for (const slot of slots) expect([0, 1, 2, 3]).toContain(slot);
    // Every slot is held: a fifth node has none (it leases everything it uses).
    const fifth = await subscribeChanges("slot-e");
    expect(fifth.hello.slot).toBeNull();
    // slot-a leaves: the next node gets its slot, but may use it only once slot-a can no longer be.
    held[0]?.socket.close();
    await sleep(100);
    const taker = await subscribeChanges("slot-e");
    expect(taker.hello.slot).toBe(slots[0]);
    expect(taker.hello.standing_after_ms).toBeGreaterThan(0);
    expect(taker.hello.standing_after_ms).toBeLessThanOrEqual(STANDING_GRACE_MS);
    // A node that reconnects keeps its slot, and may use it at once.
    const back = await subscribeChanges("slot-b");
    expect(back.hello).toMatchObject({ slot: slots[1], standing_after_ms: 0 });
    for (const node of [...held.slice(1), taker, back]) node.socket.close();
  });

  it("a quiet sub-user's limits stand as a part at each slot; a renewal ends them at every node, until all leases end", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 4, concurrent_max: 2 });
    const [a, b] = [await subscribeChanges("stand-a"), await subscribeChanges("stand-b")];
    const answer = await json(await gateway("/subusers", { node: "stand-a", names: [subuser.name] }));
    const snapshot = answer.subusers[0];
    expect(snapshot, JSON.stringify(answer)).toBeDefined();
    expect(snapshot.standing).toEqual(["residential"]);
    const part = (limit: number, slot: number) => standingShare(limit, 4, slot, subuser.name);
    expect([0, 1, 2, 3].map((slot) => part(4, slot))).toEqual([1, 1, 1, 1]);
    expect([0, 1, 2, 3].reduce((sum, slot) => sum + part(2, slot), 0)).toBe(2);

    // A node without a slot asks for everything: the standing parts end, and every node is told. Until each node
    // has stopped using its part, the parts still count: nothing is free yet.
    const first = await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "stand-c");
    expect(first).toMatchObject({ concurrent: 0, rps: 0 });
    const ended = (message: Record<string, any>) =>
      message.type === "subuser" && message.subuser.name === subuser.name && message.subuser.standing.length === 0;
    const push = await a.next(ended);
    await b.next(ended);
    expect(push.subuser.version).toBeGreaterThan(snapshot.version);

    // stand-a reports its part (none of it in use) and confirms the lower share: its part is free at once.
    const slot = a.hello.slot as number;
    const reported = await renew(
      busy(subuser.name, { concurrent: 0, rps: 0 }, { concurrent: part(2, slot), rps: part(4, slot) }),
      "stand-a",
      slot,
    );
    const lowered = { concurrent: reported.concurrent, rps: reported.rps };
    await renew(busy(subuser.name, { concurrent: 0, rps: 0 }, lowered), "stand-a", slot);
    const freed = await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "stand-c");
    expect(freed).toMatchObject({ concurrent: part(2, slot), rps: part(4, slot) });

    // Past the grace no node may use a part: all of it can be leased.
    await sleep(STANDING_GRACE_MS + 50);
    const all = await renew(
      busy(subuser.name, { concurrent: 2, rps: 4 }, { concurrent: freed.concurrent, rps: freed.rps }),
      "stand-c",
    );
    expect(all).toMatchObject({ concurrent: 2, rps: 4 });

    // Once every lease has ended, the limits stand again, and every node is told.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(all.expires_at) + MINUTE);
    expect(await runDurableObjectAlarm(gateOf(subuser))).toBe(true);
    vi.useRealTimers();
    const stood = await a.next(
      (message) =>
        message.type === "subuser" && message.subuser.name === subuser.name && message.subuser.standing.length === 1,
    );
    expect(stood.subuser.version).toBeGreaterThan(push.subuser.version);
    a.socket.close();
    b.socket.close();
  });

  it("a node that comes to wait gets the node holding the capacity asked, by a push to it alone, to renew now", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 4, concurrent_max: 2 });
    const [holder, bystander] = [await subscribeChanges("node-h"), await subscribeChanges("node-x")];
    await leaseFromNowOn(subuser.name);
    const quiet = await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "node-h");
    // Nobody waits: a quiet lease of a minute.
    expect(Date.parse(quiet.expires_at)).toBeGreaterThan(Date.now() + 55_000);
    const waiting = await renew(busy(subuser.name, { concurrent: 1, rps: 2 }), "node-w");
    expect(waiting).toMatchObject({ concurrent: 0, rps: 0 });
    const cut = await holder.next((message) => message.type === "lease_cut");
    expect(cut).toEqual({ type: "lease_cut", name: subuser.name, product: "residential" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(bystander.messages.filter((message) => message.type === "lease_cut")).toEqual([]);
    holder.socket.close();
    bystander.socket.close();
  });

  it("the per-connection path (authorize) and the nodes share one limit: together they never pass it", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 50, concurrent_max: 3 });
    const feed = await subscribeChanges("mixed-a");
    const connect = () => authorize({ username: username(subuser.name), password: subuser.password });
    // A quiet sub-user's first authorize ends the standing parts (the node hears of it), then waits out the grace.
    const first = await connect();
    expect(first.allow).toBe(true);
    await feed.next((message) => message.type === "subuser" && message.subuser.name === subuser.name);
    // The node asks for everything: it gets what the open connection leaves.
    const node = await renew(busy(subuser.name, { concurrent: 3, rps: 0 }), "mixed-a", feed.hello.slot);
    expect(node.concurrent).toBe(2);
    // The node holds the rest: a second connection through authorize is refused, and the node is asked to give back.
    const refused = await connect();
    expect(refused).toMatchObject({ allow: false, status: 429, error_code: "concurrent-limit" });
    await feed.next((message) => message.type === "lease_cut" && message.name === subuser.name);
    // The node renews using one: one place is free again for the per-connection path, and only one.
    const held = { concurrent: node.concurrent, rps: 0 };
    const lowered = await renew({ ...busy(subuser.name, { concurrent: 1, rps: 0 }, held), open: 1 }, "mixed-a");
    expect(lowered.concurrent).toBe(1);
    await renew({ ...busy(subuser.name, { concurrent: 1, rps: 0 }, { concurrent: 1, rps: 0 }), open: 1 }, "mixed-a");
    const second = await connect();
    expect(second.allow).toBe(true);
    expect(await connect()).toMatchObject({ allow: false, status: 429, error_code: "concurrent-limit" });
    // Released connections go back to the nodes at once.
    for (const lease of [first.lease, second.lease]) {
      expect((await json(await gateway("/release", { lease }))).released).toBe(true);
    }
    const regrown = await renew({ ...busy(subuser.name, { concurrent: 3, rps: 0 }, held), open: 1 }, "mixed-a");
    expect(regrown.concurrent).toBe(3);
    feed.socket.close();
  });

  it("a gate that restarts while its grants are live over-admits nothing: a node counts at its noted use until it renews", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 4, concurrent_max: 2 });
    await leaseFromNowOn(subuser.name);
    const held = await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "node-a");
    expect(held).toMatchObject({ concurrent: 2, rps: 4 });
    // The gate's memory (every grant it made) is gone; node-a still enforces its share until its lease ends.
    await abortAllDurableObjects();
    expect(await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "node-b")).toMatchObject({
      concurrent: 0,
      rps: 0,
    });
    // node-a, renewing, is cut to its fair share (node-b waits); what it gave up counts until it confirms the cut.
    const cut = await renew(busy(subuser.name, { concurrent: 2, rps: 4 }, { concurrent: 2, rps: 4 }), "node-a");
    expect(cut).toMatchObject({ concurrent: 1, rps: 2 });
    expect(await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "node-b")).toMatchObject({
      concurrent: 0,
      rps: 0,
    });
    await renew(busy(subuser.name, { concurrent: 2, rps: 4 }, { concurrent: 1, rps: 2 }), "node-a");
    expect(await renew(busy(subuser.name, { concurrent: 2, rps: 4 }), "node-b")).toMatchObject({
      concurrent: 1,
      rps: 2,
    });
  });

  it("a gate that restarts counts each node at its noted use: a node holding nothing gets the rest at once", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 10, concurrent_max: 4 });
    await leaseFromNowOn(subuser.name);
    expect(await renew(busy(subuser.name, { concurrent: 1, rps: 2 }), "node-a")).toMatchObject({
      concurrent: 1,
      rps: 2,
    });
    // The gate's memory is gone; it noted node-a's use (with room: 2 connections, 3 rps). node-b, holding nothing
    // (a node started again, say), gets what node-a cannot be using, not nothing until node-a's lease ends.
    await abortAllDurableObjects();
    expect(await renew(busy(subuser.name, { concurrent: 2, rps: 5 }), "node-b")).toMatchObject({
      concurrent: 2,
      rps: 5,
    });
    expect(await renew(busy(subuser.name, { concurrent: 4, rps: 10 }), "node-c")).toMatchObject({
      concurrent: 0,
      rps: 2,
    });
  });

  it("a lease of an unknown name grants nothing", async () => {
    expect(await renew(busy("nosuchname", { concurrent: 1, rps: 1 }))).toMatchObject({
      known: false,
      concurrent: 0,
      rps: 0,
    });
  });

  it("a sticky session is pinned once, to the first node's exit, for every node", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const sticky = username(subuser.name, "type-res-region-us-session-cart1-sesstime-10");
    const ask = (node: string, exit: string) =>
      gateway("/sessions", { node, name: subuser.name, username: sticky, exit_ip: exit });
    const first = await json(await ask("node-a", "198.51.100.7"));
    const second = await json(await ask("node-b", "198.51.100.99"));
    expect(first.session.exit_ip).toBe("198.51.100.7");
    expect(second.session).toEqual(first.session);
    const plain = await gateway("/sessions", {
      node: "node-a",
      name: subuser.name,
      username: username(subuser.name),
      exit_ip: "198.51.100.7",
    });
    expect(plain.status).toBe(422);
  });

  it("pushes each change to every connected node within a second: disable, rotation, whitelist, delete", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 5 });
    const [a, b] = [await subscribeChanges("node-a"), await subscribeChanges("node-b")];
    const changed = (check: (snapshot: Record<string, any>) => boolean) => (message: Record<string, any>) =>
      message.type === "subuser" && message.subuser.name === subuser.name && check(message.subuser);

    const patch = (body: unknown) => call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body });
    expect((await patch({ status: "disabled" })).status).toBe(200);
    const disabled = await a.next(changed((s) => s.status === "disabled"));
    await b.next(changed((s) => s.status === "disabled"));

    await patch({ status: "active" });
    const rotated = await call("POST", `/v1/subusers/${subuser.id}/rotate-password`, { token: account.token });
    const { password } = await json(rotated);
    const afterRotation = await a.next(changed((s) => s.passwords.length === 2));
    expect(afterRotation.subuser.passwords[0].sha256).toBe(await sha256Hex(password));
    expect(Date.parse(afterRotation.subuser.passwords[1].until)).toBeGreaterThan(Date.now() + 55_000);
    expect(afterRotation.subuser.version).toBeGreaterThan(disabled.subuser.version);

    const added = await json(
      await call("POST", "/v1/whitelists", {
        token: account.token,
        body: { ip: "198.51.100.0/24", subuser: subuser.id, product: "residential" },
      }),
    );
    await a.next(changed((s) => s.whitelist.length === 1));
    await call("DELETE", `/v1/whitelists/${added.id}`, { token: account.token });
    await a.next(changed((s) => s.whitelist.length === 0 && s.version > afterRotation.subuser.version + 1));

    await call("DELETE", `/v1/subusers/${subuser.id}`, { token: account.token });
    await b.next(changed((s) => s.status === "deleted"));
    a.socket.close();
    b.socket.close();
  });

  it("terminating a session decided at the node pushes the key's generation + 1 to every connected node within a second", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const [a, b] = [await subscribeChanges("gen-a"), await subscribeChanges("gen-b")];
    const fetched = (await json(await gateway("/subusers", { node: "gen-a", names: [subuser.name] }))).subusers[0];
    expect(fetched.generations).toEqual({});
    const key = sessionKey(username(subuser.name, "type-res-region-us-session-gen1-sesstime-10"));
    const hash = keyHash(key);
    const atGeneration = (generation: number) => (message: Record<string, any>) =>
      message.type === "subuser" &&
      message.subuser.name === subuser.name &&
      message.subuser.generations[hash] === generation;
    // What DELETE /v1/residential/sessions/{id} asks the gate for a session the store named from (key, generation).
    const gate = new SubuserGateClient(env, subuser.name);
    for (const generation of [0, 1]) {
      const asked = Date.now();
      const id = sessionIdAt(key, generation, asked);
      expect(await gate.terminateSession({ id, key, generation })).toEqual({ book: null, generation: generation + 1 });
      const [pushed] = await Promise.all([a.next(atGeneration(generation + 1)), b.next(atGeneration(generation + 1))]);
      expect(Date.now() - asked).toBeLessThan(1000);
      expect(pushed.subuser.version).toBeGreaterThan(fetched.version);
    }
    const refetched = (await json(await gateway("/subusers", { node: "gen-a", names: [subuser.name] }))).subusers[0];
    expect(refetched.generations).toEqual({ [hash]: 2 });
    a.socket.close();
    b.socket.close();
  });

  it("the push channel is a WebSocket only, behind the node's credential", async () => {
    expect((await call("GET", `/internal/gateway/changes?node=${NODE}`, { token: await nodeToken(NODE) })).status).toBe(
      422,
    );
    const anonymous = await call("GET", `/internal/gateway/changes?node=${NODE}`, {
      headers: { Upgrade: "websocket" },
    });
    expect(anonymous.status).toBe(401);
  });
});

describe("node identities: every claim on the node contract is bound to the calling node's own credential", () => {
  const as = (token: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    call(path === "/changes" ? "GET" : "POST", `/internal/gateway${path}`, { token, body, headers });

  it("the node contract refuses the shared gateway token (403 node_credential_required); other routes keep it", async () => {
    for (const [path, body] of [
      ["/subusers", { node: NODE, names: ["x"] }],
      ["/leases", { node: NODE, leases: [busy("x", { concurrent: 1, rps: 1 })] }],
      ["/sessions", { node: NODE, name: "x", username: "user_x-session-a-sesstime-5", exit_ip: "198.51.100.7" }],
    ] as const) {
      const refused = await as(GATEWAY_TOKEN, path, body);
      expect(refused.status, path).toBe(403);
      expect((await json(refused)).code).toBe("node_credential_required");
    }
    const feed = await call("GET", `/internal/gateway/changes?node=${NODE}`, {
      token: GATEWAY_TOKEN,
      headers: { Upgrade: "websocket" },
    });
    expect(feed.status).toBe(403);
    const usage = await call("POST", "/internal/gateway/usage", { token: GATEWAY_TOKEN, body: { batch_id: "b" } });
    expect(usage.status).not.toBe(401);
    expect(usage.status).not.toBe(403);
  });

  it("a credential speaks for its own node only: naming another node is 403 node_mismatch, on every node route", async () => {
    const other = await nodeToken("node-other");
    for (const [path, body] of [
      ["/subusers", { node: NODE, names: ["x"] }],
      ["/leases", { node: NODE, leases: [busy("x", { concurrent: 1, rps: 1 })] }],
      ["/sessions", { node: NODE, name: "x", username: "user_x-session-a-sesstime-5", exit_ip: "198.51.100.7" }],
    ] as const) {
      const refused = await as(other, path, body);
      expect(refused.status, path).toBe(403);
      expect((await json(refused)).code).toBe("node_mismatch");
    }
    const feed = await call("GET", `/internal/gateway/changes?node=${NODE}`, {
      token: other,
      headers: { Upgrade: "websocket" },
    });
    expect(feed.status).toBe(403);
    expect((await json(feed)).code).toBe("node_mismatch");
  });

  it("a node cannot replace another node's lease: the fleet never holds more than the limit", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 10, concurrent_max: 4 });
    await leaseFromNowOn(subuser.name);
    const held = await renew(busy(subuser.name, { concurrent: 4, rps: 10 }), "node-a");
    expect(held).toMatchObject({ concurrent: 4, rps: 10 });
    // node-m renews as node-a, asking for nothing held: refused, so node-a's lease stands.
    const forged = await as(await nodeToken("node-m"), "/leases", {
      node: "node-a",
      leases: [busy(subuser.name, { concurrent: 4, rps: 10 })],
    });
    expect(forged.status).toBe(403);
    const own = await renew(busy(subuser.name, { concurrent: 4, rps: 10 }), "node-m");
    expect(own).toMatchObject({ concurrent: 0, rps: 0 });
  });

  it("a node cannot stand for another node's slot: the renewal counts as from no slot", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 4, concurrent_max: 2 });
    const [owner, thief] = [await subscribeChanges("slot-owner"), await subscribeChanges("slot-thief")];
    const slot = owner.hello.slot as number;
    expect(thief.hello.slot).not.toBe(slot);
    const part = (limit: number) => standingShare(limit, 4, slot, subuser.name);
    // The thief claims the owner's slot and its standing part: nothing is granted while the owner may still use it.
    const stolen = await renew(
      busy(subuser.name, { concurrent: 2, rps: 4 }, { concurrent: part(2), rps: part(4) }),
      "slot-thief",
      slot,
    );
    expect(stolen).toMatchObject({ concurrent: 0, rps: 0 });
    owner.socket.close();
    thief.socket.close();
  });

  it("revoking a node's credential closes its feed at once (4001), refuses its calls, and its leases lapse", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 5, concurrent_max: 3 });
    await leaseFromNowOn(subuser.name);
    const feed = await subscribeChanges("node-r");
    const closed = new Promise<{ code: number; at: number }>((resolve) =>
      feed.socket.addEventListener("close", (event) => resolve({ code: event.code, at: Date.now() })),
    );
    const token = await nodeToken("node-r");
    const lease = await renew(busy(subuser.name, { concurrent: 3, rps: 5 }), "node-r");
    expect(lease).toMatchObject({ concurrent: 3, rps: 5 });

    const listed = await json(await call("GET", "/internal/admin/gateway-nodes?node=node-r", { token: ADMIN_TOKEN }));
    expect(listed.data).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(token);
    const revokedAt = Date.now();
    const revoked = await call("DELETE", `/internal/admin/gateway-nodes/${listed.data[0].id}`, { token: ADMIN_TOKEN });
    expect(revoked.status).toBe(200);
    expect((await json(revoked)).revoked_at).not.toBeNull();
    const { code, at } = await closed;
    expect(code).toBe(4001);
    expect(at - revokedAt).toBeLessThanOrEqual(1000);
    const refused = await as(token, "/leases", {
      node: "node-r",
      leases: [busy(subuser.name, { concurrent: 3, rps: 5 })],
    });
    expect(refused.status).toBe(401);

    // Its lease is not renewed: another node gets the limits once it has expired, not before.
    expect(await renew(busy(subuser.name, { concurrent: 3, rps: 5 }), "node-s")).toMatchObject({ concurrent: 0 });
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(lease.expires_at) + 1);
    const after = await renew(busy(subuser.name, { concurrent: 3, rps: 5 }), "node-s");
    vi.useRealTimers();
    expect(after).toMatchObject({ concurrent: 3, rps: 5 });
  });

  it("credentials are issued per node (at most 5 live), listed without tokens, and revoking twice is harmless", async () => {
    const tokens = [];
    for (let i = 0; i < 5; i++) {
      const issued = await call("POST", "/internal/admin/gateway-nodes", {
        token: ADMIN_TOKEN,
        body: { node: "node-l" },
      });
      expect(issued.status).toBe(201);
      expect(issued.headers.get("Cache-Control")).toBe("no-store");
      tokens.push((await json(issued)).token);
    }
    const sixth = await call("POST", "/internal/admin/gateway-nodes", { token: ADMIN_TOKEN, body: { node: "node-l" } });
    expect(sixth.status).toBe(422);
    expect((await json(sixth)).code).toBe("over_limit");
    const { data } = await json(await call("GET", "/internal/admin/gateway-nodes?node=node-l", { token: ADMIN_TOKEN }));
    expect(data).toHaveLength(5);
    const first = data[0].id;
    expect((await call("DELETE", `/internal/admin/gateway-nodes/${first}`, { token: ADMIN_TOKEN })).status).toBe(200);
    expect((await call("DELETE", `/internal/admin/gateway-nodes/${first}`, { token: ADMIN_TOKEN })).status).toBe(200);
    expect(
      (await call("DELETE", "/internal/admin/gateway-nodes/gwn_01JZZZZZZZZZZZZZZZZZZZZZZZ", { token: ADMIN_TOKEN }))
        .status,
    ).toBe(404);
    const again = await call("POST", "/internal/admin/gateway-nodes", { token: ADMIN_TOKEN, body: { node: "node-l" } });
    expect(again.status).toBe(201);
  });
});

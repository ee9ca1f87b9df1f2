import { afterEach, describe, expect, it, vi } from "vitest";
import type { SessionSnapshot } from "../../src/durable-objects/traffic-store/contract";
import { idAt } from "../../src/platform/ids";
import { generationOf, keyHash, sessionIdAt, sessionKey, stickyExit } from "../../src/platform/sticky-sessions";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { subscribeChanges } from "../helpers/change-feed";
import { runCron } from "../helpers/cron";
import { call, env, gateway, json } from "../helpers/http";
import { createSubuser, gateOf, type TestSubuser, username } from "../helpers/subusers";
import { usageRecord } from "../helpers/usage";

/**
 * Terminating a sticky session decided at the node (docs/gateway.md, "Sticky sessions"): the session's key moves to
 * the next generation in its gate, every connected node is sent the snapshot, and the account's store keeps the
 * record as terminated. The session is named by the account's store from the usage a node reports (`session_gen`
 * and the signed owner), as every node names its exit: from the key and its generation.
 */

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** The exits a residential node picks from (TEST-NET-2). */
const RESIDENTIAL_EXITS = Array.from({ length: 254 }, (_, i) => `198.51.100.${i + 1}`);

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** The node's snapshot of the sub-user. */
async function snapshotOf(subuser: TestSubuser, node = "term-node") {
  const body = await json(await gateway("/subusers", { node, names: [subuser.name] }));
  return body.subusers[0] as Record<string, any>;
}

/**
 * A sticky session as a node serves it: the key's generation from the snapshot, the exit from both, its usage
 * reported with `session_gen` and the owner; the store told of it (what naming it from its usage will do).
 */
async function nodeSession(
  account: TestAccount,
  subuser: TestSubuser,
  sessionId: string,
  { minutes = 10, startedAt = Date.now() } = {},
) {
  const user = username(subuser.name, `type-res-region-us-session-${sessionId}-sesstime-${minutes}`);
  const key = sessionKey(user);
  const snapshot = await snapshotOf(subuser);
  const generation = generationOf(snapshot.generations, key);
  const exitIp = stickyExit(RESIDENTIAL_EXITS, key, generation) as string;
  const session: SessionSnapshot = {
    id: sessionIdAt(key, generation, startedAt),
    key,
    generation,
    subuserId: subuser.id,
    gateName: subuser.name,
    product: "residential",
    sessionId,
    region: "us",
    state: null,
    city: null,
    asn: null,
    exitIp,
    startedAt,
    expiresAt: startedAt + minutes * MINUTE,
    status: "active",
    terminatedAt: null,
    bytesUsed: 0,
    requests: 0,
    repinned: false,
    version: 0,
  };
  const report = async (at: number) => {
    const record = usageRecord(user, {
      ts: new Date(at).toISOString(),
      exit_ip: exitIp,
      session_gen: generation,
      subuser: snapshot.subuser,
      account: snapshot.account,
      owner_tag: snapshot.owner_tag,
    });
    expect((await gateway("/usage", { batch_id: crypto.randomUUID(), records: [record] })).status).toBe(202);
  };
  await report(startedAt);
  // The account's store names the session from its usage: the id every node and the store compute alike.
  await eventually(async () => (await read(account, session.id)).status === 200 || startedAt < Date.now() - 2 * MINUTE);
  return { user, key, generation, exitIp, session, report };
}

/** Polls `holds` until it is true (at most 5 s). */
async function eventually(holds: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error("not within 5 s");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const terminate = (account: TestAccount, id: string) =>
  call("DELETE", `/v1/residential/sessions/${id}`, { token: account.token });

const read = (account: TestAccount, id: string) =>
  call("GET", `/v1/residential/sessions/${id}`, { token: account.token });

async function auditActions(account: TestAccount, id: string): Promise<string[]> {
  const response = await call("GET", `/v1/audit-events?resource=${id}`, { token: account.token });
  expect(response.status).toBe(200);
  return (await json(response)).data.map((entry: { action: string }) => entry.action);
}

/** What a worker that died right after its D1 batch leaves: the request and its entry, the gate untold. */
async function stalledTermination(account: TestAccount, sessionId: string, gateName: string, requestedAt: number) {
  await env.DB.batch([
    env.DB.prepare(
      "INSERT INTO session_terminations (session_id, account_id, gate_name, requested_at) VALUES (?, ?, ?, ?)",
    ).bind(sessionId, account.id, gateName, requestedAt),
    env.DB.prepare(
      `INSERT INTO audit_events (id, account_id, actor_key_id, source_ip, request_id, action, resource_type,
         resource_id, products, changes, previous, created_at)
       VALUES (?, ?, NULL, NULL, 'req_crash', 'session.terminated', 'session', ?, '["residential"]', NULL, NULL, ?)`,
    ).bind(idAt("auditEvent", requestedAt, sessionId), account.id, sessionId, requestedAt),
  ]);
}

describe("terminating a session decided at the node", () => {
  it("DELETE bumps the key's generation: both connected nodes hold generation + 1 within a second, so the username's next exit differs; the store keeps it terminated", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const [a, b] = [await subscribeChanges("term-a"), await subscribeChanges("term-b")];
    const { key, generation, exitIp, session, report } = await nodeSession(account, subuser, "node1");
    expect(generation).toBe(0);
    expect(await json(await read(account, session.id))).toMatchObject({
      status: "active",
      requests: 1,
      exit_ip: exitIp,
    });

    const asked = Date.now();
    const response = await terminate(account, session.id);
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await json(response)).toMatchObject({ id: session.id, status: "terminated", session_id: "node1" });
    const bumped = (message: Record<string, any>) =>
      message.type === "subuser" &&
      message.subuser.name === subuser.name &&
      message.subuser.generations[keyHash(key)] === generation + 1;
    const [pushA] = await Promise.all([a.next(bumped), b.next(bumped)]);
    expect(Date.now() - asked).toBeLessThan(1000);
    // The node's rule gives the username a new exit at once.
    expect(stickyExit(RESIDENTIAL_EXITS, key, pushA.subuser.generations[keyHash(key)])).not.toBe(exitIp);
    // Nodes of the previous release are no longer told `session_ended` of a session they never held.
    expect([...a.messages, ...b.messages].filter((message) => message.type === "session_ended")).toEqual([]);

    expect(await json(await read(account, session.id))).toMatchObject({ id: session.id, status: "terminated" });
    const listed = await json(await call("GET", "/v1/residential/sessions", { token: account.token }));
    expect(listed.data.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      [session.id, "terminated"],
    ]);
    // A snapshot fetched afterwards has it too.
    expect((await snapshotOf(subuser)).generations).toEqual({ [keyHash(key)]: 1 });
    // Usage of the ended generation still in flight (a node that had not heard yet) joins the terminated record.
    await report(Date.now());
    await eventually(async () => (await json(await read(account, session.id))).requests === 2);
    expect(await json(await read(account, session.id))).toMatchObject({ status: "terminated", requests: 2 });
    a.socket.close();
    b.socket.close();
  });

  it("a second DELETE and the cron's retry change nothing more: the generation and the snapshot's version stay, one audit entry", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { key, session } = await nodeSession(account, subuser, "twice1");
    expect((await terminate(account, session.id)).status).toBe(200);
    const once = await gateOf(subuser).snapshot();
    expect(once?.generations).toEqual({ [keyHash(key)]: 1 });

    const again = await terminate(account, session.id);
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ id: session.id, status: "terminated" });
    // The cron finding the request not done (a crash before `done_at`) ends it again: idempotent.
    await env.DB.prepare("UPDATE session_terminations SET done_at = NULL, requested_at = ? WHERE session_id = ?")
      .bind(Date.now() - 2 * MINUTE, session.id)
      .run();
    await runCron(Date.now());
    const after = await gateOf(subuser).snapshot();
    expect(after?.generations).toEqual({ [keyHash(key)]: 1 });
    expect(after?.version).toBe(once?.version);
    expect(await auditActions(account, session.id)).toEqual(["session.terminated"]);
    const done = await env.DB.prepare("SELECT done_at FROM session_terminations WHERE session_id = ?")
      .bind(session.id)
      .first<{ done_at: number | null }>();
    expect(done?.done_at).not.toBeNull();
  });

  it("the cron finishes a termination a crash left half-done (the key bumped, the record terminated); one of a session that expired meanwhile is withdrawn and bumps nothing", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const live = await nodeSession(account, subuser, "crash2", { minutes: 30 });
    const expired = await nodeSession(account, subuser, "gone2", { minutes: 1, startedAt: Date.now() - 3 * MINUTE });
    const requestedAt = Date.now() - 2 * MINUTE;
    await stalledTermination(account, live.session.id, subuser.name, requestedAt);
    await stalledTermination(account, expired.session.id, subuser.name, requestedAt);

    await runCron(Date.now());
    expect((await gateOf(subuser).snapshot())?.generations).toEqual({ [keyHash(live.key)]: 1 });
    expect(await json(await read(account, live.session.id))).toMatchObject({ status: "terminated" });
    expect(await auditActions(account, live.session.id)).toEqual(["session.terminated"]);
    // The expired session was not terminated: no entry says it was, and its request is gone.
    expect(await auditActions(account, expired.session.id)).toEqual([]);
    const withdrawn = await env.DB.prepare("SELECT count(*) AS n FROM session_terminations WHERE session_id = ?")
      .bind(expired.session.id)
      .first<{ n: number }>();
    expect(withdrawn?.n).toBe(0);
  });

  it("a node session past its expires_at is 404 session_not_found on DELETE, and its key keeps its generation", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { session } = await nodeSession(account, subuser, "exp3", { minutes: 1 });
    const before = await gateOf(subuser).snapshot();

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(session.expiresAt);
    const response = await terminate(account, session.id);
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe("session_not_found");
    vi.useRealTimers();
    const after = await gateOf(subuser).snapshot();
    expect(after?.generations).toEqual({});
    expect(after?.version).toBe(before?.version);
    expect(await auditActions(account, session.id)).toEqual([]);
  });

  it("a terminated node session's record is kept 24 hours", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { session } = await nodeSession(account, subuser, "kept4", { minutes: 30 });
    const asked = Date.now();
    expect((await terminate(account, session.id)).status).toBe(200);

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(asked + DAY - 1000);
    expect(await json(await read(account, session.id))).toMatchObject({ status: "terminated" });
    vi.setSystemTime(Date.now() + 60_000);
    expect((await read(account, session.id)).status).toBe(404);
  });
});

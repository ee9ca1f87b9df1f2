import { abortAllDurableObjects } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TrafficStoreClient } from "../../src/durable-objects/traffic-store";
import { ownerTag } from "../../src/platform/owner-tag";
import { sessionIdAt, sessionKey } from "../../src/platform/sticky-sessions";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, type RecordFields, reportUsage, traffic, usageRecord } from "../helpers/usage";

// Sticky sessions decided at the node: records carry `session_gen` and their owner signed (`subuser`, `account`,
// `owner_tag`); the usage route takes the owner from the record, and the account's store names the session.

vi.setConfig({ testTimeout: 30_000 });

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const iso = (ms: number) => new Date(ms).toISOString();
/** A traffic range of whole minutes around `t`. */
const around = (t: number) => `from=${iso(t - (t % MINUTE) - 5 * MINUTE)}&to=${iso(t - (t % MINUTE) + 5 * MINUTE)}`;

/** A moment well ahead of the real clock, on a minute (as test/traffic/sessions.test.ts). */
function aheadOfRealTime(): number {
  const t = Date.now() + 2 * DAY;
  return t - (t % MINUTE);
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function resUser(subuser: TestSubuser, sessionId: string, minutes = 10, geo = "region-us"): string {
  return username(subuser.name, `type-res-${geo}-session-${sessionId}-sesstime-${minutes}`);
}

/** The signed owner a node's snapshot gives for the sub-user. */
async function owner(account: TestAccount, subuser: TestSubuser): Promise<RecordFields> {
  const tag = await ownerTag(env.SEALING_KEY, { name: subuser.name, subuserId: subuser.id, accountId: account.id });
  return { subuser: subuser.id, account: account.id, owner_tag: tag };
}

/** A record a node decided: the session's generation and the signed owner. */
async function nodeRecord(
  account: TestAccount,
  subuser: TestSubuser,
  user: string,
  fields: RecordFields = {},
): Promise<RecordFields> {
  return usageRecord(user, { session_gen: 0, ...(await owner(account, subuser)), ...fields });
}

async function post(records: RecordFields[], batchId?: string): Promise<Record<string, any>> {
  const response = await reportUsage(records, batchId);
  expect(response.status, await response.clone().text()).toBe(202);
  return json(response);
}

function getSession(account: TestAccount, id: string, product = "residential") {
  return call("GET", `/v1/${product}/sessions/${id}`, { token: account.token });
}

async function listSessions(account: TestAccount, query = "", product = "residential") {
  const response = await call("GET", `/v1/${product}/sessions${query ? `?${query}` : ""}`, { token: account.token });
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
}

/** Waits until the session reads and `holds`. */
function sessionWhen(account: TestAccount, id: string, holds: (session: Record<string, any>) => boolean) {
  return eventually(
    async () => {
      const response = await getSession(account, id);
      return { status: response.status, body: await json(response) };
    },
    (read) => read.status === 200 && holds(read.body),
  ).then((read) => read.body);
}

function listedWhen(account: TestAccount, query: string, holds: (page: Record<string, any>) => boolean) {
  return eventually(() => listSessions(account, query), holds);
}

const ids = (page: Record<string, any>): string[] => page.data.map((session: { id: string }) => session.id);

/**
 * The statements the Worker sends D1 that read sub-users by name (the owners' query, `owners.ts`), on the primary or
 * a replica session: the binding the Worker runs with is the test's.
 */
function ownerQueries(): () => string[] {
  const statements: string[] = [];
  const watch = <T extends { prepare: D1Database["prepare"] }>(target: T): T => {
    const prepare = target.prepare.bind(target);
    target.prepare = (query: string) => {
      statements.push(query);
      return prepare(query);
    };
    return target;
  };
  const withSession = env.DB.withSession.bind(env.DB);
  vi.spyOn(env.DB, "withSession").mockImplementation((constraint) => watch(withSession(constraint)));
  const prepare = env.DB.prepare.bind(env.DB);
  vi.spyOn(env.DB, "prepare").mockImplementation((query) => {
    statements.push(query);
    return prepare(query);
  });
  return () => statements.filter((query) => /from "subusers".* where "subusers"."name" in/i.test(query));
}

describe("the usage route takes a signed owner from the record", () => {
  it("reads no owner from D1 for records whose tag verifies, and does for records without one", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const signed = await createSubuser(account);
    const unsigned = await createSubuser(account);
    const queries = ownerQueries();
    const t = Date.now();
    expect(
      await post([
        await nodeRecord(account, signed, resUser(signed, "tag1"), { ts: iso(t) }),
        await nodeRecord(account, signed, username(signed.name), { ts: iso(t), session_gen: undefined }),
      ]),
    ).toEqual({ accepted: 2, dropped: 0, duplicate: false });
    expect(queries()).toEqual([]);
    // The same observation sees the owners' query of a name never seen, reported without an owner.
    expect(await post([usageRecord(username(unsigned.name), { ts: iso(t) })])).toMatchObject({ accepted: 1 });
    expect(queries()).toHaveLength(1);
    vi.restoreAllMocks();

    const read = await eventually(
      () => traffic(account, "residential", `${around(t)}&group_by=subuser`),
      (body) => body.rows.reduce((sum: number, row: { requests: number }) => sum + row.requests, 0) === 3,
    );
    expect(
      Object.fromEntries(read.rows.map((row: { subuser: string; requests: number }) => [row.subuser, row.requests])),
    ).toEqual({ [signed.id]: 2, [unsigned.id]: 1 });
  });

  it("owns a record as its tag says, with no D1 read: a name and sub-user id D1 has never had count under that id", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    // A name and id D1 has never had, signed for the account: only the record can have named this owner.
    const ghost = { ...subuser, id: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", name: "ghost0node0owner" };
    const t = Date.now();
    expect(await post([await nodeRecord(account, ghost, resUser(ghost, "g1"), { ts: iso(t) })])).toMatchObject({
      accepted: 1,
      dropped: 0,
    });
    const read = await eventually(
      () => traffic(account, "residential", `${around(t)}&group_by=subuser`),
      (body) => body.rows.length > 0,
    );
    expect(read.rows).toEqual([expect.objectContaining({ subuser: ghost.id, requests: 1 })]);
  });

  it("drops and counts a record whose tag does not verify: forged, another account's, another name's", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const other = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const second = await createSubuser(account);
    const user = resUser(subuser, "f1");
    const t = Date.now();
    const good = await nodeRecord(account, subuser, user, { ts: iso(t) });
    const log = vi.spyOn(console, "log");
    const bad = [
      // Forged: a tag of the right shape that the API never issued.
      { ...(await nodeRecord(account, subuser, user, { ts: iso(t) })), owner_tag: "A".repeat(22) },
      // The right sub-user, claimed for another account.
      await nodeRecord(account, subuser, user, { ts: iso(t), account: other.id }),
      // Another sub-user's valid owner on this sub-user's username.
      await nodeRecord(account, second, user, { ts: iso(t) }),
    ];
    const answer = await post([good, ...bad]);
    expect(answer).toEqual({ accepted: 1, dropped: 3, duplicate: false });
    const logged = log.mock.calls.map(([line]) => String(line)).filter((line) => line.includes("owner_tag_refused"));
    expect(logged).toHaveLength(1);
    expect(JSON.parse(logged[0] as string)).toMatchObject({
      event: "usage_owner_tag_refused",
      records: 3,
      subuser: subuser.id,
      account: account.id,
    });
    for (const record of [good, ...bad]) expect(logged[0]).not.toContain(record.owner_tag as string);

    const session = sessionIdAt(sessionKey(user), 0, Date.parse(good.ts as string));
    expect(await sessionWhen(account, session, (s) => s.requests > 0)).toMatchObject({ requests: 1 });
    const theirs = await listSessions(other);
    expect(theirs.data).toEqual([]);
  });
});

describe("sessions a node decided (session_gen): named by the account's store", () => {
  it("names the session from the key, generation and first request's time; two batches (two nodes) make one session", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "one1", 10, "region-us-state-ca-city-la-asn-7922");
    const t = Date.now() - 5000;
    const id = sessionIdAt(sessionKey(user), 0, t);
    // Node A's batch has the session's first request; node B's a later one (the store applies it after A's).
    await post([
      await nodeRecord(account, subuser, user, { ts: iso(t), exit_ip: "203.0.113.61" }),
      await nodeRecord(account, subuser, user, { ts: iso(t + 1000), exit_ip: "203.0.113.61" }),
    ]);
    await sessionWhen(account, id, (s) => s.requests === 2);
    await post([await nodeRecord(account, subuser, user, { ts: iso(t + 2000), exit_ip: "203.0.113.61" })]);
    const read = await sessionWhen(account, id, (s) => s.requests === 3);
    expect(read).toMatchObject({
      id,
      subuser: subuser.id,
      session_id: "one1",
      region: "us",
      state: "ca",
      city: "la",
      asn: 7922,
      exit_ip: "203.0.113.61",
      started_at: iso(t),
      expires_at: iso(t + 10 * MINUTE),
      bytes_used: 3 * 1100,
      requests: 3,
      repinned: false,
      status: "active",
    });
    expect(ids(await listSessions(account))).toEqual([id]);
  });

  it("a late record before the session's first (within the clock skew) moves started_at earlier and keeps the id, across a restart of the store", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "late1");
    const t = Date.now() - 1000;
    const id = sessionIdAt(sessionKey(user), 0, t);
    await post([await nodeRecord(account, subuser, user, { ts: iso(t) })]);
    await sessionWhen(account, id, (s) => s.requests === 1);
    await post([await nodeRecord(account, subuser, user, { ts: iso(t - 3 * MINUTE) })]);
    const moved = await sessionWhen(account, id, (s) => s.requests === 2);
    expect(moved).toMatchObject({ started_at: iso(t - 3 * MINUTE), expires_at: iso(t + 7 * MINUTE) });
    expect(ids(await listSessions(account))).toEqual([id]);

    // The store restarts: it reads its sessions back from its arrival rows, with the same ids and times.
    await abortAllDurableObjects();
    expect(await sessionWhen(account, id, () => true)).toEqual(moved);
    await post([await nodeRecord(account, subuser, user, { ts: iso(t + 1000) })]);
    expect(await sessionWhen(account, id, (s) => s.requests === 3)).toMatchObject({
      started_at: iso(t - 3 * MINUTE),
      expires_at: iso(t + 7 * MINUTE),
    });
    expect(ids(await listSessions(account))).toEqual([id]);
  });

  it("after expires_at the username's usage starts a new session (new id); the old one answers 404 session_not_found", async () => {
    const t0 = aheadOfRealTime();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "exp1", 1);
    const first = sessionIdAt(sessionKey(user), 0, t0);
    await post([await nodeRecord(account, subuser, user, { ts: iso(t0) })]);
    expect(await sessionWhen(account, first, (s) => s.requests === 1)).toMatchObject({
      started_at: iso(t0),
      expires_at: iso(t0 + MINUTE),
    });

    vi.setSystemTime(t0 + MINUTE - 1);
    expect((await getSession(account, first)).status).toBe(200);
    vi.setSystemTime(t0 + MINUTE);
    const expired = await getSession(account, first);
    expect(expired.status).toBe(404);
    expect((await json(expired)).code).toBe("session_not_found");
    expect(ids(await listSessions(account))).toEqual([]);

    vi.setSystemTime(t0 + MINUTE + 5000);
    await post([await nodeRecord(account, subuser, user, { ts: iso(t0 + MINUTE + 1000) })]);
    const next = sessionIdAt(sessionKey(user), 0, t0 + MINUTE + 1000);
    expect(next).not.toBe(first);
    expect(await sessionWhen(account, next, (s) => s.requests === 1)).toMatchObject({
      started_at: iso(t0 + MINUTE + 1000),
      expires_at: iso(t0 + 2 * MINUTE + 1000),
    });
    expect((await getSession(account, first)).status).toBe(404);
    expect(ids(await listSessions(account))).toEqual([next]);
  });

  it("another generation of the username is another session", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "gen1");
    const t = Date.now() - 1000;
    await post([
      await nodeRecord(account, subuser, user, { ts: iso(t), exit_ip: "203.0.113.71" }),
      await nodeRecord(account, subuser, user, { ts: iso(t + 10), session_gen: 1, exit_ip: "203.0.113.72" }),
    ]);
    const page = await listedWhen(account, "", (p) => p.data.length === 2);
    expect(ids(page).sort()).toEqual(
      [sessionIdAt(sessionKey(user), 0, t), sessionIdAt(sessionKey(user), 1, t + 10)].sort(),
    );
    expect(page.data.map((s: Record<string, any>) => s.exit_ip).sort()).toEqual(["203.0.113.71", "203.0.113.72"]);
  });

  it("lists with filters and paging; GET has the last 10 requests newest first, bytes_used and requests; repinned", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const other = await createSubuser(account);
    const t = Date.now() - 10_000;
    const users = {
      plain: resUser(subuser, "l1"),
      gb: resUser(subuser, "l2", 10, "region-gb-asn-3320"),
      theirs: resUser(other, "l1"),
    };
    const counted = Array.from({ length: 12 }, (_, i) =>
      nodeRecord(account, subuser, users.plain, {
        ts: iso(t + 10 * i),
        method: ["GET", "POST"][i % 2],
        target_host: `host${i}.example.com`,
        status: 200 + i,
        bytes_in: 1000 + i,
        bytes_out: 100 + i,
        exit_ip: "203.0.113.81",
      }),
    );
    const records = await Promise.all(counted);
    await post(records.slice(0, 5));
    await post([
      ...records.slice(5),
      await nodeRecord(account, subuser, users.gb, { ts: iso(t + 1), exit_ip: "203.0.113.82" }),
      await nodeRecord(account, subuser, users.gb, { ts: iso(t + 2), exit_ip: "203.0.113.83", repinned: true }),
      await nodeRecord(account, other, users.theirs, { ts: iso(t + 3), exit_ip: "203.0.113.84" }),
    ]);
    const plain = sessionIdAt(sessionKey(users.plain), 0, t);
    const gb = sessionIdAt(sessionKey(users.gb), 0, t + 1);
    const theirs = sessionIdAt(sessionKey(users.theirs), 0, t + 3);
    const read = await sessionWhen(account, plain, (s) => s.requests === 12);
    expect(read.bytes_used).toBe(records.reduce((sum, r) => sum + (r.bytes_in as number) + (r.bytes_out as number), 0));
    expect(read.last_requests).toEqual(
      records
        .slice(2)
        .reverse()
        .map((r) => ({
          request_id: r.request_id,
          ts: r.ts,
          method: r.method,
          target_host: r.target_host,
          status: r.status,
          bytes: (r.bytes_in as number) + (r.bytes_out as number),
          exit_ip: "203.0.113.81",
        })),
    );
    await listedWhen(account, "", (page) => page.data.length === 3);
    // Newest first: by id, so by start.
    expect(ids(await listSessions(account))).toEqual([theirs, gb, plain]);
    expect(ids(await listSessions(account, `subuser=${other.id}`))).toEqual([theirs]);
    expect(ids(await listSessions(account, "session_id=l1"))).toEqual([theirs, plain]);
    expect(ids(await listSessions(account, "region=GB"))).toEqual([gb]);
    expect(ids(await listSessions(account, "asn=3320"))).toEqual([gb]);
    expect(ids(await listSessions(account, "repinned=true"))).toEqual([gb]);
    expect(ids(await listSessions(account, "repinned=false"))).toEqual([theirs, plain]);
    expect((await listSessions(account, "repinned=true")).data[0]).toMatchObject({
      exit_ip: "203.0.113.83",
      repinned: true,
    });
    const first = await listSessions(account, "limit=2");
    expect(ids(first)).toEqual([theirs, gb]);
    const second = await listSessions(account, `limit=2&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(ids(second)).toEqual([plain]);
    expect(second.next_cursor).toBeNull();
    expect(ids(await listSessions(account, "", "mobile"))).toEqual([]);
  });

  it("counts a batch once: posted again (duplicate) or redelivered by the queue after a failure", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "once1");
    const t = Date.now() - 1000;
    const { sent, deliver } = holdUsageMessages();
    const records = [
      await nodeRecord(account, subuser, user, { ts: iso(t), bytes_in: 500, bytes_out: 50 }),
      await nodeRecord(account, subuser, user, { ts: iso(t + 1), bytes_in: 500, bytes_out: 50 }),
    ];
    const batchId = crypto.randomUUID();
    expect(await post(records, batchId)).toMatchObject({ accepted: 2, duplicate: false });
    expect(await post(records, batchId)).toMatchObject({ accepted: 2, duplicate: true });
    expect(sent).toHaveLength(1);
    vi.spyOn(TrafficStoreClient.prototype, "ingest").mockRejectedValueOnce(new Error("the store failed"));
    expect((await deliver()).retryMessages).toHaveLength(1);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await deliver()).retryMessages).toHaveLength(0);
    const id = sessionIdAt(sessionKey(user), 0, t);
    const read = await getSession(account, id);
    expect(read.status).toBe(200);
    expect(await json(read)).toMatchObject({ id, requests: 2, bytes_used: 1100, started_at: iso(t) });
    expect(await listSessions(account)).toMatchObject({ data: [{ id, requests: 2, bytes_used: 1100 }] });
  });
});

import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SubuserGateClient } from "../../src/durable-objects/subuser-gate";
import { TrafficStoreClient } from "../../src/durable-objects/traffic-store";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { call, gateway, json } from "../helpers/http";
import { authorize, createSubuser, gateOf, type TestSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, type RecordFields, reportUsage, usageRecord } from "../helpers/usage";

// Usage must show within 10 s (`eventually`); leave the test room to fail on that rather than on the default 5 s.
vi.setConfig({ testTimeout: 30_000 });

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const SESSION_ID = /^ses_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Well-formed, never issued. */
const MISSING_ID = "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V";

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A moment well ahead of the real clock: workerd schedules alarms on the real clock, so with the fake clock there
 * the gates' alarms (telling the index of started sessions, the expiry sweep) never run by themselves; tests run
 * them with `flush`.
 */
function aheadOfRealTime(): number {
  const t = Date.now() + 2 * DAY;
  return t - (t % MINUTE);
}

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** The residential username of a sticky session. */
function resUser(subuser: TestSubuser, sessionId: string, minutes = 10, geo = "region-us"): string {
  return username(subuser.name, `type-res-${geo}-session-${sessionId}-sesstime-${minutes}`);
}

function mobUser(subuser: TestSubuser, sessionId: string, minutes = 10, geo = "region-us"): string {
  return username(subuser.name, `type-mob-${geo}-session-${sessionId}-sesstime-${minutes}`);
}

/** Authorizes a sticky-session username and returns the decision's `session`. */
async function pin(
  subuser: TestSubuser,
  user: string,
  product: "residential" | "mobile" = "residential",
): Promise<{ id: string; exit_ip: string | null; started_at: string; expires_at: string }> {
  const decision = await authorize({ username: user, password: subuser.password, product });
  expect(decision.allow, JSON.stringify(decision)).toBe(true);
  return decision.session;
}

/** Runs the gate's alarm now: it tells the account's index of the sessions it started. */
async function flush(subuser: TestSubuser): Promise<void> {
  expect(await runDurableObjectAlarm(gateOf(subuser))).toBe(true);
}

function getSession(account: TestAccount, id: string, product = "residential", token = account.token) {
  return call("GET", `/v1/${product}/sessions/${id}`, { token });
}

async function readSession(account: TestAccount, id: string, product = "residential") {
  const response = await getSession(account, id, product);
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
}

async function listSessions(account: TestAccount, product: string, query = "", token = account.token) {
  const response = await call("GET", `/v1/${product}/sessions${query ? `?${query}` : ""}`, { token });
  expect(response.status, await response.clone().text()).toBe(200);
  return json(response);
}

const ids = (page: Record<string, any>): string[] => page.data.map((session: { id: string }) => session.id);

/** Waits until the account's index lists `count` sessions of the product (the gate tells it within ~1 s). */
function listed(account: TestAccount, product: string, count: number, query = "") {
  return eventually(
    () => listSessions(account, product, query),
    (page) => page.data.length === count,
  );
}

/** Waits until a single session can be read (it is in the index) and `holds`. */
function sessionWhen(
  account: TestAccount,
  id: string,
  holds: (session: Record<string, any>) => boolean,
  product = "residential",
) {
  return eventually(
    async () => {
      const response = await getSession(account, id, product);
      return { status: response.status, body: await json(response) };
    },
    (read) => read.status === 200 && holds(read.body),
  ).then((read) => read.body);
}

/** The error body without its request id, to compare two 404s. */
async function errorOf(response: Response) {
  const { request_id: _ignored, ...rest } = await json(response);
  return { status: response.status, ...rest };
}

describe("POST /internal/gateway/authorize: the sub-user's gate pins sticky sessions", () => {
  it("starts a new session for a username with session/sesstime: ses_ id, exit_ip null, expires_at = started_at + sesstime minutes", async () => {
    const t0 = aheadOfRealTime();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const decision = await authorize({
      username: resUser(subuser, "abc1", 10, "region-us-state-ca-city-la-asn-7922"),
      password: subuser.password,
    });
    expect(decision).toMatchObject({ allow: true, subuser: subuser.id });
    expect(decision.session).toEqual({
      id: expect.stringMatching(SESSION_ID),
      exit_ip: null,
      started_at: iso(t0),
      expires_at: iso(t0 + 10 * MINUTE),
    });
    const longest = await pin(subuser, resUser(subuser, "abc2", 30));
    expect(Date.parse(longest.expires_at) - Date.parse(longest.started_at)).toBe(30 * MINUTE);
  });

  it("returns the active session of the exact same username again (same id and times); a username without session segments gets session null", async () => {
    const t0 = aheadOfRealTime();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const first = await pin(subuser, resUser(subuser, "keep1", 10));
    vi.setSystemTime(t0 + 9 * MINUTE);
    const again = await pin(subuser, resUser(subuser, "keep1", 10));
    expect(again).toEqual(first);
    const rotating = await authorize({ username: username(subuser.name), password: subuser.password });
    expect(rotating.allow).toBe(true);
    expect(rotating.session).toBeNull();
  });

  it("keys a session by the full username: another session_id, another geo, or another sub-user with the same session_id is a different session", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const other = await createSubuser(account);
    const base = await pin(subuser, resUser(subuser, "same1"));
    const sessions = [
      base,
      await pin(subuser, resUser(subuser, "same2")),
      await pin(subuser, resUser(subuser, "same1", 10, "region-gb")),
      await pin(subuser, resUser(subuser, "same1", 10, "region-us-asn-7922")),
      await pin(subuser, resUser(subuser, "same1", 20)),
      await pin(other, resUser(other, "same1")),
    ];
    expect(new Set(sessions.map((session) => session.id)).size).toBe(sessions.length);
    expect((await pin(subuser, resUser(subuser, "same1"))).id).toBe(base.id);
  });

  it("mobile sessions allow sesstime up to 60 minutes and are read under /v1/mobile/sessions only", async () => {
    const t0 = aheadOfRealTime();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
    const session = await pin(subuser, mobUser(subuser, "mob1", 60), "mobile");
    expect(session).toMatchObject({ exit_ip: null, started_at: iso(t0), expires_at: iso(t0 + 60 * MINUTE) });
    await flush(subuser);
    expect(await readSession(account, session.id, "mobile")).toMatchObject({
      id: session.id,
      subuser: subuser.id,
      session_id: "mob1",
      status: "active",
    });
    expect(ids(await listSessions(account, "mobile"))).toEqual([session.id]);
    expect(ids(await listSessions(account, "residential"))).toEqual([]);
    const wrongProduct = await getSession(account, session.id, "residential");
    expect(wrongProduct.status).toBe(404);
    expect((await json(wrongProduct)).code).toBe("session_not_found");
  });
});

describe("session usage (POST /internal/gateway/usage → the account's store)", () => {
  it("pins exit_ip from the session's first usage record; later authorize decisions return it and later records without repinned do not move it", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "pin1");
    const session = await pin(subuser, user);
    expect(session.exit_ip).toBeNull();
    const t = Date.now();
    await reportUsage([
      usageRecord(user, { ts: iso(t + 1), exit_ip: "203.0.113.11" }),
      usageRecord(user, { ts: iso(t + 2), exit_ip: "203.0.113.12" }),
    ]);
    const pinned = await sessionWhen(account, session.id, (s) => s.requests === 2);
    expect(pinned.exit_ip).toBe("203.0.113.11");
    expect(pinned.repinned).toBe(false);
    expect(await pin(subuser, user)).toEqual({ ...session, exit_ip: "203.0.113.11" });

    await reportUsage([usageRecord(user, { ts: iso(t + 3), exit_ip: "203.0.113.13" })]);
    const later = await sessionWhen(account, session.id, (s) => s.requests === 3);
    expect(later).toMatchObject({ exit_ip: "203.0.113.11", repinned: false });
    expect((await pin(subuser, user)).exit_ip).toBe("203.0.113.11");
  });

  it("a record with repinned: true moves the pin to its exit_ip and sets repinned on the session", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "repin1");
    const session = await pin(subuser, user);
    const t = Date.now();
    await reportUsage([usageRecord(user, { ts: iso(t + 1), exit_ip: "203.0.113.21" })]);
    await sessionWhen(account, session.id, (s) => s.exit_ip === "203.0.113.21");
    await reportUsage([usageRecord(user, { ts: iso(t + 2), exit_ip: "203.0.113.22", repinned: true })]);
    const moved = await sessionWhen(account, session.id, (s) => s.requests === 2);
    expect(moved).toMatchObject({ exit_ip: "203.0.113.22", repinned: true, status: "active" });
    expect((await pin(subuser, user)).exit_ip).toBe("203.0.113.22");
    const listed = await eventually(
      () => listSessions(account, "residential", "repinned=true"),
      (page) => page.data.length === 1,
    );
    expect(listed.data[0]).toMatchObject({ id: session.id, exit_ip: "203.0.113.22", repinned: true });
  });

  it("adds bytes_in + bytes_out to bytes_used and counts requests across batches; GET returns the last 10 requests newest first", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "count1");
    const session = await pin(subuser, user);
    const t = Date.now();
    const methods = ["GET", "POST", "PUT", "HEAD"];
    const records = Array.from({ length: 12 }, (_, i) =>
      usageRecord(user, {
        ts: iso(t + 10 * (i + 1)),
        method: methods[i % methods.length],
        target_host: `host${i}.example.com`,
        status: 200 + i,
        bytes_in: 1000 + i,
        bytes_out: 100 + 7 * i,
        exit_ip: "203.0.113.31",
      }),
    );
    // Two batches, the second first-listed out of time order: the order of the report does not matter.
    expect((await reportUsage(records.slice(0, 7))).status).toBe(202);
    expect((await reportUsage(records.slice(7).reverse())).status).toBe(202);
    const read = await sessionWhen(account, session.id, (s) => s.requests === 12);
    const bytes = (r: RecordFields) => (r.bytes_in as number) + (r.bytes_out as number);
    expect(read.bytes_used).toBe(records.reduce((sum, r) => sum + bytes(r), 0));
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
          bytes: bytes(r),
          exit_ip: "203.0.113.31",
        })),
    );
    const inList = await eventually(
      () => listSessions(account, "residential", `session_id=count1`),
      (page) => page.data[0]?.requests === 12,
    );
    expect(inList.data[0]).toMatchObject({ id: session.id, bytes_used: read.bytes_used, requests: 12 });
    expect(inList.data[0].last_requests).toBeUndefined();
  });

  it("attributes usage by the full username: records of other usernames (no session, another session_id or geo, another sub-user) do not count", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const other = await createSubuser(account);
    const user = resUser(subuser, "own1");
    const mine = await pin(subuser, user);
    const theirs = await pin(other, resUser(other, "own1"));
    const t = Date.now();
    await reportUsage([
      usageRecord(username(subuser.name), { ts: iso(t + 1), bytes_in: 5000 }),
      usageRecord(resUser(subuser, "own2"), { ts: iso(t + 1), bytes_in: 5000 }),
      usageRecord(resUser(subuser, "own1", 10, "region-gb"), { ts: iso(t + 1), bytes_in: 5000 }),
      usageRecord(resUser(other, "own1"), { ts: iso(t + 1), bytes_in: 3000, bytes_out: 30, exit_ip: "203.0.113.42" }),
      usageRecord(user, { ts: iso(t + 2), bytes_in: 700, bytes_out: 70, exit_ip: "203.0.113.41" }),
    ]);
    const read = await sessionWhen(account, mine.id, (s) => s.requests > 0);
    expect(read).toMatchObject({ requests: 1, bytes_used: 770, exit_ip: "203.0.113.41" });
    expect(read.last_requests).toHaveLength(1);
    const theirRead = await sessionWhen(account, theirs.id, (s) => s.requests > 0);
    expect(theirRead).toMatchObject({ requests: 1, bytes_used: 3030, exit_ip: "203.0.113.42" });
    expect(ids(await listSessions(account, "residential")).sort()).toEqual([mine.id, theirs.id].sort());
  });
  it("a usage message the queue redelivers after a crash half-way counts once in the session", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "once1");
    const session = await pin(subuser, user);
    await sessionWhen(account, session.id, () => true);
    // Keep the messages instead of letting the broker deliver them, then deliver them by hand.
    const { sent, deliver } = holdUsageMessages();
    const t = Date.now();
    const records = [1, 2].map((i) => usageRecord(user, { ts: iso(t + i), bytes_in: 500, bytes_out: 50 }));
    expect((await reportUsage(records)).status).toBe(202);
    expect(sent).toHaveLength(1);
    // First delivery: the gate applies the session usage, then the account's store fails.
    vi.spyOn(TrafficStoreClient.prototype, "ingest").mockRejectedValueOnce(new Error("crash after the gate"));
    expect((await deliver()).retryMessages).toHaveLength(1);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect(await readSession(account, session.id)).toMatchObject({ requests: 2, bytes_used: 1100 });
    expect(await listSessions(account, "residential")).toMatchObject({
      data: [{ id: session.id, requests: 2, bytes_used: 1100 }],
    });
  });
});

describe("records that name their session (`session` on usage records) and exits pinned on release", () => {
  it("sums the usage of records naming their session in the account's store, with no call to the sub-user's gate", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "named1", 10, "region-us-state-ca-city-la");
    const session = await pin(subuser, user);
    const resolve = vi.spyOn(SubuserGateClient.prototype, "resolveSessions");
    const t = Date.now();
    const records = [1, 2, 3].map((i) =>
      usageRecord(user, {
        ts: iso(t + i),
        session: session.id,
        bytes_in: 100 * i,
        bytes_out: 1,
        exit_ip: "203.0.113.51",
      }),
    );
    expect((await reportUsage(records)).status).toBe(202);
    const read = await sessionWhen(account, session.id, (s) => s.requests === 3);
    expect(read).toMatchObject({
      id: session.id,
      subuser: subuser.id,
      session_id: "named1",
      region: "us",
      state: "ca",
      city: "la",
      exit_ip: "203.0.113.51",
      started_at: session.started_at,
      expires_at: session.expires_at,
      bytes_used: 603,
      repinned: false,
      status: "active",
    });
    expect(read.last_requests.map((r: { request_id: string }) => r.request_id)).toEqual(
      records.map((r) => r.request_id).reverse(),
    );
    expect(resolve).not.toHaveBeenCalled();
  });

  it("counts a named session's usage once when the queue redelivers its message", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "named2");
    const session = await pin(subuser, user);
    const { deliver } = holdUsageMessages();
    const t = Date.now();
    const records = [1, 2].map((i) => usageRecord(user, { ts: iso(t + i), session: session.id, bytes_in: 500 }));
    expect((await reportUsage(records)).status).toBe(202);
    vi.spyOn(TrafficStoreClient.prototype, "ingest").mockRejectedValueOnce(new Error("crash before the store"));
    expect((await deliver()).retryMessages).toHaveLength(1);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect((await deliver()).retryMessages).toHaveLength(0);
    expect(await readSession(account, session.id)).toMatchObject({ requests: 2, bytes_used: 1200 });
  });

  it("pins a session's exit when the gateway releases its first connection with exit_ip, and moves it on repinned", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "rel1");
    const release = async (lease: string, body: Record<string, unknown>) => {
      const response = await gateway("/release", { lease, ...body });
      expect(response.status).toBe(200);
      return json(response);
    };
    const first = await authorize({ username: user, password: subuser.password, product: "residential" });
    expect(first.session.exit_ip).toBeNull();
    expect(await release(first.lease, { exit_ip: "203.0.113.61" })).toEqual({ released: true });
    const second = await authorize({ username: user, password: subuser.password, product: "residential" });
    expect(second.session).toMatchObject({ id: first.session.id, exit_ip: "203.0.113.61" });
    // Another connection's exit does not move a pin; a repin does.
    await release(second.lease, { exit_ip: "203.0.113.62" });
    const third = await authorize({ username: user, password: subuser.password, product: "residential" });
    expect(third.session.exit_ip).toBe("203.0.113.61");
    await release(third.lease, { exit_ip: "203.0.113.63", repinned: true });
    expect((await pin(subuser, user)).exit_ip).toBe("203.0.113.63");
    // A release without exit_ip, or of a lease without a session, pins nothing and still frees the slot.
    const plain = await authorize({
      username: username(subuser.name),
      password: subuser.password,
      product: "residential",
    });
    expect(await release(plain.lease, { exit_ip: "203.0.113.64" })).toEqual({ released: true });
    const bad = await gateway("/release", { lease: plain.lease, exit_ip: "not an ip" });
    expect(bad.status).toBe(422);
  });
});

describe("GET /v1/{product}/sessions", () => {
  it("lists the sessions of all the account's sub-users, newest first, with the session fields; only the product's own, never another account's", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const first = await createSubuser(account, { products: ["residential", "mobile"] });
    const second = await createSubuser(account);
    const stranger = await createAccount({ bandwidthGb: 1 });
    const strangerSub = await createSubuser(stranger);
    await pin(strangerSub, resUser(strangerSub, "list1"));
    const a = await pin(first, resUser(first, "list1", 10, "region-us-state-ca-city-la-asn-7922"));
    const b = await pin(second, resUser(second, "list2", 5, "region-gb"));
    const m = await pin(first, mobUser(first, "list3"), "mobile");
    const page = await listed(account, "residential", 2);
    expect(ids(page)).toEqual([b.id, a.id]);
    expect(page.next_cursor).toBeNull();
    expect(page.data[1]).toEqual({
      id: a.id,
      subuser: first.id,
      session_id: "list1",
      region: "us",
      state: "ca",
      city: "la",
      asn: 7922,
      exit_ip: null,
      started_at: a.started_at,
      expires_at: a.expires_at,
      bytes_used: 0,
      requests: 0,
      repinned: false,
      status: "active",
    });
    expect(page.data[0]).toMatchObject({ subuser: second.id, region: "gb", state: null, city: null, asn: null });
    expect(ids(await listed(account, "mobile", 1))).toEqual([m.id]);
    expect(ids(await listed(stranger, "residential", 1))).not.toContain(a.id);
  });

  it("filters by subuser, session_id, region (any case), asn and repinned, alone and combined", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const one = await createSubuser(account);
    const two = await createSubuser(account);
    const oneA = await pin(one, resUser(one, "fa", 10, "region-us-asn-7922"));
    const oneB = await pin(one, resUser(one, "fb", 10, "region-gb"));
    const twoA = await pin(two, resUser(two, "fa", 10, "region-us-state-ca-city-la-asn-7018"));
    const t = Date.now();
    await reportUsage([usageRecord(resUser(one, "fb", 10, "region-gb"), { ts: iso(t + 1), repinned: true })]);
    await eventually(
      () => listSessions(account, "residential", "repinned=true"),
      (page) => page.data.length === 1,
    );
    await listed(account, "residential", 3);
    const expectIds = async (query: string, expected: string[]) =>
      expect(ids(await listSessions(account, "residential", query)), query).toEqual(expected);
    await expectIds(`subuser=${one.id}`, [oneB.id, oneA.id]);
    await expectIds(`subuser=${two.id}`, [twoA.id]);
    await expectIds("session_id=fa", [twoA.id, oneA.id]);
    await expectIds("session_id=zz", []);
    await expectIds("region=gb", [oneB.id]);
    await expectIds("region=US", [twoA.id, oneA.id]);
    await expectIds("asn=7922", [oneA.id]);
    await expectIds("asn=7018", [twoA.id]);
    await expectIds("repinned=true", [oneB.id]);
    await expectIds("repinned=false", [twoA.id, oneA.id]);
    await expectIds(`subuser=${one.id}&session_id=fa`, [oneA.id]);
    await expectIds(`subuser=${two.id}&region=gb`, []);
    // An unknown sub-user answers as the traffic and request-log filters do.
    const unknown = await call("GET", "/v1/residential/sessions?subuser=sub_00000000000000000000000000", {
      token: account.token,
    });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).code).toBe("subuser_not_found");
  });

  it("pages with cursor and limit: every session once, newest first, next_cursor and a Link header that keeps the filters", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const other = await createSubuser(account);
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await pin(subuser, resUser(subuser, `page${i}`))).id);
    await pin(other, resUser(other, "page9"));
    await listed(account, "residential", 6);
    const seen: string[] = [];
    let path = `/v1/residential/sessions?subuser=${subuser.id}&limit=2`;
    let pages = 0;
    for (;;) {
      const response = await call("GET", path, { token: account.token });
      expect(response.status).toBe(200);
      const page = await json(response);
      pages++;
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...ids(page));
      const link = response.headers.get("Link");
      if (page.next_cursor === null) {
        expect(link).toBeNull();
        break;
      }
      expect(link).toMatch(/^<https?:\/\/[^>]+cursor=[^>]+>; rel="next"$/);
      const next = new URL(link!.slice(1, link!.indexOf(">")));
      expect(next.searchParams.get("cursor")).toBe(page.next_cursor);
      expect(next.searchParams.get("subuser")).toBe(subuser.id);
      path = `/v1/residential/sessions${next.search}`;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual([...created].reverse());
  });

  it("refuses bad filters and paging with 422 invalid_request naming the field", async () => {
    const account = await createAccount();
    for (const query of [
      "limit=0",
      "limit=201",
      "cursor=garbage",
      "region=usa",
      "region=1x",
      "asn=-1",
      "asn=abc",
      "repinned=yes",
      "session_id=UPPER",
    ]) {
      const response = await call("GET", `/v1/residential/sessions?${query}`, { token: account.token });
      expect(response.status, query).toBe(422);
      const body = await json(response);
      expect(body.code, query).toBe("invalid_request");
      expect(body.details[0].field, query).toBe(query.split("=")[0]);
    }
  });
});

describe("GET and DELETE /v1/{product}/sessions/{id}", () => {
  it("DELETE terminates the session (status terminated, still listed and readable), and the next authorize with that username starts a new session with a new id and exit_ip null", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "term1", 30);
    const session = await pin(subuser, user);
    await reportUsage([usageRecord(user, { exit_ip: "203.0.113.51" })]);
    await sessionWhen(account, session.id, (s) => s.exit_ip === "203.0.113.51");
    expect((await pin(subuser, user)).exit_ip).toBe("203.0.113.51");

    const response = await call("DELETE", `/v1/residential/sessions/${session.id}`, { token: account.token });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ id: session.id, status: "terminated", exit_ip: "203.0.113.51" });

    const fresh = await pin(subuser, user);
    expect(fresh.id).not.toBe(session.id);
    expect(fresh.exit_ip).toBeNull();
    expect(fresh.id).toMatch(SESSION_ID);
    expect(await readSession(account, session.id)).toMatchObject({ status: "terminated", exit_ip: "203.0.113.51" });
    const page = await listed(account, "residential", 2);
    expect(page.data.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      [fresh.id, "active"],
      [session.id, "terminated"],
    ]);
    // Usage reported after the termination belongs to the new session.
    await reportUsage([usageRecord(user, { exit_ip: "203.0.113.52" })]);
    expect(await sessionWhen(account, fresh.id, (s) => s.requests === 1)).toMatchObject({
      exit_ip: "203.0.113.52",
      status: "active",
    });
    expect(await readSession(account, session.id)).toMatchObject({ requests: 1, exit_ip: "203.0.113.51" });
    expect((await pin(subuser, user)).exit_ip).toBe("203.0.113.52");
  });

  it("keeps a terminated session's record 24 hours, then answers 404 session_not_found", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const session = await pin(subuser, resUser(subuser, "kept1", 30));
    await sessionWhen(account, session.id, () => true);
    const before = Date.now();
    const response = await call("DELETE", `/v1/residential/sessions/${session.id}`, { token: account.token });
    expect(response.status).toBe(200);
    const after = Date.now();

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(before + DAY - 1000);
    expect(await readSession(account, session.id)).toMatchObject({ status: "terminated" });
    expect(ids(await listSessions(account, "residential"))).toEqual([session.id]);
    vi.setSystemTime(after + DAY + 1000);
    const gone = await getSession(account, session.id);
    expect(gone.status).toBe(404);
    expect((await json(gone)).code).toBe("session_not_found");
    expect(ids(await listSessions(account, "residential"))).toEqual([]);
  });

  it("after expires_at a session is 404 session_not_found before any sweep, gone from the list, and the next authorize starts a new one", async () => {
    const t0 = aheadOfRealTime();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const user = resUser(subuser, "exp1", 1);
    const session = await pin(subuser, user);
    expect(session.expires_at).toBe(iso(t0 + MINUTE));
    await flush(subuser);
    expect(await readSession(account, session.id)).toMatchObject({ status: "active", expires_at: iso(t0 + MINUTE) });

    vi.setSystemTime(t0 + MINUTE - 1);
    expect((await getSession(account, session.id)).status).toBe(200);
    vi.setSystemTime(t0 + MINUTE);
    // The gate still holds the record (its alarm, which sweeps, has not run), yet the API no longer shows it.
    const held = await runInDurableObject(
      gateOf(subuser),
      (_gate, state) => state.storage.sql.exec("SELECT count(*) AS n FROM sessions WHERE id = ?", session.id).one().n,
    );
    expect(held).toBe(1);
    const expired = await getSession(account, session.id);
    expect(expired.status).toBe(404);
    expect((await json(expired)).code).toBe("session_not_found");
    expect(ids(await listSessions(account, "residential"))).toEqual([]);
    const terminate = await call("DELETE", `/v1/residential/sessions/${session.id}`, { token: account.token });
    expect(terminate.status).toBe(404);
    expect((await json(terminate)).code).toBe("session_not_found");

    const next = await pin(subuser, user);
    expect(next).toEqual({
      id: expect.stringMatching(SESSION_ID),
      exit_ip: null,
      started_at: iso(t0 + MINUTE),
      expires_at: iso(t0 + 2 * MINUTE),
    });
    expect(next.id).not.toBe(session.id);
  });

  it("another account's session, a session of the other product and a malformed id answer 404 session_not_found exactly like a missing id", async () => {
    const owner = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(owner, { products: ["residential", "mobile"] });
    const residential = await pin(subuser, resUser(subuser, "mine1"));
    const mobile = await pin(subuser, mobUser(subuser, "mine2"), "mobile");
    await sessionWhen(owner, residential.id, () => true);
    await sessionWhen(owner, mobile.id, () => true, "mobile");
    const stranger = await createAccount({ bandwidthGb: 1 });

    for (const method of ["GET", "DELETE"]) {
      const missing = await errorOf(
        await call(method, `/v1/residential/sessions/${MISSING_ID}`, { token: owner.token }),
      );
      expect(missing).toMatchObject({ status: 404, code: "session_not_found" });
      const cases: Array<[string, string]> = [
        [`/v1/residential/sessions/${residential.id}`, stranger.token],
        [`/v1/mobile/sessions/${residential.id}`, owner.token],
        [`/v1/residential/sessions/${mobile.id}`, owner.token],
        ["/v1/residential/sessions/nope", owner.token],
      ];
      for (const [path, token] of cases) {
        expect(await errorOf(await call(method, path, { token })), `${method} ${path}`).toEqual(missing);
      }
    }
    // Nothing was terminated by the refused DELETEs.
    expect(await readSession(owner, residential.id)).toMatchObject({ status: "active" });
    expect(await readSession(owner, mobile.id, "mobile")).toMatchObject({ status: "active" });
    expect(ids(await listSessions(stranger, "residential"))).toEqual([]);
  });

  it("a key whose product scope does not cover the sub-user's product gets 403 subuser_scope_mismatch on list, get and delete", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { products: ["residential"] });
    const session = await pin(subuser, resUser(subuser, "scope1"));
    await sessionWhen(account, session.id, () => true);
    const mobileKey = await issueKey(account.id, ["mobile"]);
    const residentialKey = await issueKey(account.id, ["residential"]);

    const expectMismatch = async (response: Response) => {
      expect(response.status).toBe(403);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    };
    await expectMismatch(await getSession(account, session.id, "residential", mobileKey.token));
    await expectMismatch(await call("GET", "/v1/residential/sessions", { token: mobileKey.token }));
    await expectMismatch(await call("DELETE", `/v1/residential/sessions/${session.id}`, { token: mobileKey.token }));
    expect(await readSession(account, session.id)).toMatchObject({ status: "active" });

    expect((await getSession(account, session.id, "residential", residentialKey.token)).status).toBe(200);
    expect(ids(await listSessions(account, "residential", "", residentialKey.token))).toEqual([session.id]);
  });

  it("no sessions routes exist for isp: 404", async () => {
    const account = await createAccount();
    for (const [method, path] of [
      ["GET", "/v1/isp/sessions"],
      ["GET", `/v1/isp/sessions/${MISSING_ID}`],
      ["DELETE", `/v1/isp/sessions/${MISSING_ID}`],
    ] as const) {
      const response = await call(method, path, { token: account.token });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).code).toBe("not_found");
    }
  });
});

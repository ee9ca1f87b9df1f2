import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { authorize, createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, usageRecord } from "../helpers/usage";

const MINUTE = 60_000;

afterEach(() => {
  vi.useRealTimers();
});

function sessionName(subuser: TestSubuser, session: string, minutes = 10, geo = "region-us-state-ca") {
  return username(subuser.name, `type-res-${geo}-session-${session}-sesstime-${minutes}`);
}

async function admit(subuser: TestSubuser, name: string) {
  const decision = await authorize({ username: name, password: subuser.password });
  expect(decision.allow, JSON.stringify(decision)).toBe(true);
  return decision;
}

const getSession = (account: TestAccount, id: string, product = "residential") =>
  call("GET", `/v1/${product}/sessions/${id}`, { token: account.token });

async function sessionBody(account: TestAccount, id: string) {
  return eventually(
    async () => {
      const response = await getSession(account, id);
      return response.status === 200 ? json(response) : null;
    },
    (body) => body !== null,
  ) as Promise<Record<string, any>>;
}

const list = async (account: TestAccount, query = "", product = "residential") => {
  const response = await call("GET", `/v1/${product}/sessions${query}`, { token: account.token });
  expect(response.status).toBe(200);
  return json(response);
};

describe("sticky sessions: the gate starts, pins and counts them", () => {
  it("starts a session on the first authorize (exit_ip null, expires after sesstime) and returns the same one for the same username", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const name = sessionName(subuser, "abc123", 10);
    const first = await admit(subuser, name);
    expect(first.session).toMatchObject({ id: expect.stringMatching(/^ses_[0-9A-Z]{26}$/), exit_ip: null });
    expect(Date.parse(first.session.expires_at) - Date.parse(first.session.started_at)).toBe(10 * MINUTE);
    const again = await admit(subuser, name);
    expect(again.session).toEqual(first.session);
    // The whole username is the key: another geo is another session; no session segments, no session.
    const elsewhere = await admit(subuser, sessionName(subuser, "abc123", 10, "region-de"));
    expect(elsewhere.session.id).not.toBe(first.session.id);
    expect((await admit(subuser, username(subuser.name))).session).toBeNull();
  });

  it("pins the exit IP of the first usage record, moves it on a repin, adds bytes and requests, keeps the last 10 requests newest first", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const name = sessionName(subuser, "pin1");
    const { session } = await admit(subuser, name);
    const at = Date.now();
    const records = Array.from({ length: 12 }, (_, i) =>
      usageRecord(name, {
        ts: new Date(at + i * 100).toISOString(),
        exit_ip: "203.0.113.7",
        bytes_in: 1000 + i,
        bytes_out: 10,
      }),
    );
    expect((await reportUsage(records)).status).toBe(202);
    const pinned = await eventually(
      () => sessionBody(account, session.id),
      (body) => body.requests === 12,
    );
    expect(pinned).toMatchObject({
      id: session.id,
      exit_ip: "203.0.113.7",
      repinned: false,
      status: "active",
      session_id: "pin1",
      region: "us",
      state: "ca",
      bytes_used: records.reduce((sum, r) => sum + (r.bytes_in as number) + (r.bytes_out as number), 0),
    });
    expect(pinned.last_requests.map((r: Record<string, any>) => r.request_id)).toEqual(
      records
        .slice(2)
        .map((r) => r.request_id)
        .reverse(),
    );
    expect(pinned.last_requests[0]).toEqual({
      request_id: records[11]?.request_id,
      ts: records[11]?.ts,
      method: "GET",
      target_host: "example.com",
      status: 200,
      bytes: 1021,
      exit_ip: "203.0.113.7",
    });
    expect((await admit(subuser, name)).session.exit_ip).toBe("203.0.113.7");

    const repin = usageRecord(name, { ts: new Date(at + 5000).toISOString(), exit_ip: "203.0.113.99", repinned: true });
    expect((await reportUsage([repin])).status).toBe(202);
    const moved = await eventually(
      () => sessionBody(account, session.id),
      (body) => body.requests === 13,
    );
    expect(moved).toMatchObject({ exit_ip: "203.0.113.99", repinned: true });
    expect((await admit(subuser, name)).session).toMatchObject({ id: session.id, exit_ip: "203.0.113.99" });
  });

  it("counts a redelivered batch once in the session", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const name = sessionName(subuser, "dup");
    const { session } = await admit(subuser, name);
    const batch = [usageRecord(name), usageRecord(name)];
    expect((await reportUsage(batch, "session-dup-batch")).status).toBe(202);
    expect(await json(await reportUsage(batch, "session-dup-batch"))).toMatchObject({ duplicate: true });
    const body = await eventually(
      () => sessionBody(account, session.id),
      (b) => b.requests === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await sessionBody(account, session.id)).requests).toBe(body.requests);
  });
});

describe("sticky sessions: terminate and expire", () => {
  it("terminates a session (kept 24 hours as terminated); the next authorize with its username starts a new one", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const name = sessionName(subuser, "term");
    const { session } = await admit(subuser, name);
    await reportUsage([usageRecord(name, { exit_ip: "203.0.113.8" })]);
    await eventually(
      () => sessionBody(account, session.id),
      (body) => body.exit_ip === "203.0.113.8",
    );
    const terminated = await call("DELETE", `/v1/residential/sessions/${session.id}`, { token: account.token });
    expect(terminated.status).toBe(200);
    expect(await json(terminated)).toMatchObject({ id: session.id, status: "terminated" });
    const next = await admit(subuser, name);
    expect(next.session.id).not.toBe(session.id);
    expect(next.session.exit_ip).toBeNull();
    expect((await sessionBody(account, session.id)).status).toBe("terminated");
    const listed = await eventually(
      () => list(account, `?subuser=${subuser.id}`),
      (body) => body.data.length === 2,
    );
    expect(listed.data.map((s: Record<string, any>) => [s.id, s.status])).toEqual([
      [next.session.id, "active"],
      [session.id, "terminated"],
    ]);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 24 * 60 * MINUTE + MINUTE);
    expect((await getSession(account, session.id)).status).toBe(404);
  });

  it("answers an expired session 404 session_not_found before any sweep, and starts a new one for its username", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const name = sessionName(subuser, "short", 1);
    const { session } = await admit(subuser, name);
    await sessionBody(account, session.id);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(session.expires_at) + 1);
    const gone = await getSession(account, session.id);
    expect(gone.status).toBe(404);
    expect((await json(gone)).code).toBe("session_not_found");
    expect((await list(account, `?subuser=${subuser.id}`)).data).toEqual([]);
    expect((await admit(subuser, name)).session.id).not.toBe(session.id);
  });
});

describe("GET /{product}/sessions: the account's sessions", () => {
  it("lists every sub-user's sessions newest first, filtered by subuser, session_id, region, asn and repinned, with cursor paging", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const alice = await createSubuser(account);
    const bob = await createSubuser(account);
    const a1 = (await admit(alice, sessionName(alice, "one", 10, "region-us"))).session;
    const a2 = (await admit(alice, sessionName(alice, "two", 10, "region-de-asn-3320"))).session;
    const b1 = (await admit(bob, sessionName(bob, "one", 10, "region-us"))).session;
    await reportUsage([usageRecord(sessionName(bob, "one", 10, "region-us"), { repinned: true })]);
    const all = await eventually(
      () => list(account),
      (body) => body.data.length === 3 && body.data[0].repinned === true,
    );
    expect(all.data.map((s: Record<string, any>) => s.id)).toEqual([b1.id, a2.id, a1.id]);
    const ids = async (query: string) => (await list(account, query)).data.map((s: Record<string, any>) => s.id);
    expect(await ids(`?subuser=${alice.id}`)).toEqual([a2.id, a1.id]);
    expect(await ids("?session_id=one")).toEqual([b1.id, a1.id]);
    expect(await ids("?region=DE")).toEqual([a2.id]);
    expect(await ids("?asn=3320")).toEqual([a2.id]);
    expect(await ids("?repinned=true")).toEqual([b1.id]);
    expect(await ids("?repinned=false")).toEqual([a2.id, a1.id]);
    const first = await call("GET", "/v1/residential/sessions?limit=2", { token: account.token });
    const page = await json(first);
    expect(page.data).toHaveLength(2);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect(first.headers.get("Link")).toContain('rel="next"');
    const second = await list(account, `?limit=2&cursor=${page.next_cursor}`);
    expect(second.data.map((s: Record<string, any>) => s.id)).toEqual([a1.id]);
    expect(second.next_cursor).toBeNull();
    expect((await list(account, "", "mobile")).data).toEqual([]);
    const bad = await call("GET", "/v1/residential/sessions?repinned=maybe", { token: account.token });
    expect(bad.status).toBe(422);
  });
});

describe("sessions: access", () => {
  it("answers another account's session and the other product's path like a missing one, a key without the product with 403, and has no isp routes", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { session } = await admit(subuser, sessionName(subuser, "mine"));
    await sessionBody(account, session.id);
    const other = await createAccount();
    for (const [who, path, method] of [
      [other, `/v1/residential/sessions/${session.id}`, "GET"],
      [other, `/v1/residential/sessions/${session.id}`, "DELETE"],
      [account, `/v1/mobile/sessions/${session.id}`, "GET"],
      [account, `/v1/mobile/sessions/${session.id}`, "DELETE"],
      [account, "/v1/residential/sessions/ses_01M83R76WAQ1WND3QQCHYQZF2P", "GET"],
      [account, "/v1/residential/sessions/not-a-session", "GET"],
    ] as const) {
      const response = await call(method, path, { token: who.token });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).code).toBe("session_not_found");
    }
    expect((await list(other)).data).toEqual([]);
    const mobileKey = await issueKey(account.id, ["mobile"]);
    for (const [path, method] of [
      [`/v1/residential/sessions/${session.id}`, "GET"],
      [`/v1/residential/sessions/${session.id}`, "DELETE"],
      ["/v1/residential/sessions", "GET"],
    ] as const) {
      const response = await call(method, path, { token: mobileKey.token });
      expect(response.status, `${method} ${path}`).toBe(403);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    }
    expect((await getSession(account, session.id)).status).toBe(200);
    expect((await call("GET", "/v1/isp/sessions", { token: account.token })).status).toBe(404);
  });
});

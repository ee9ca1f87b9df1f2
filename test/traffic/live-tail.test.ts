import { afterEach, describe, expect, it, vi } from "vitest";
import { RequestTailClient } from "../../src/durable-objects/request-tail";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, type RecordFields, reportUsage, usageRecord } from "../helpers/usage";

type Frame = { type: string; seq?: number; request?: Record<string, any> };

interface Tail {
  socket: WebSocket;
  frames: Frame[];
  requests: () => Array<Record<string, any>>;
  closed: Promise<{ code: number; reason: string }>;
  ack: (seq: number) => void;
}

function tailRequest(
  account: TestAccount,
  query = "",
  options: { product?: string; headers?: Record<string, string> } = {},
) {
  return call("GET", `/v1/${options.product ?? "residential"}/requests/tail${query}`, {
    token: options.headers?.["Sec-WebSocket-Protocol"] ? null : account.token,
    headers: { Upgrade: "websocket", ...options.headers },
  });
}

/** Opens a tail (101 expected) and records every frame it receives. */
async function openTail(account: TestAccount, query = "", options: Parameters<typeof tailRequest>[2] = {}) {
  const response = await tailRequest(account, query, options);
  if (response.status !== 101) throw new Error(`tail: ${response.status} ${await response.text()}`);
  const socket = response.webSocket as WebSocket;
  socket.accept();
  const frames: Frame[] = [];
  socket.addEventListener("message", (event) => frames.push(JSON.parse(event.data as string)));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
  );
  const tail: Tail = {
    socket,
    frames,
    requests: () => frames.filter((frame) => frame.type === "request").map((frame) => frame.request ?? {}),
    closed,
    ack: (seq) => socket.send(JSON.stringify({ type: "ack", seq })),
  };
  return { tail, response };
}

/** Waits until the tail has received `count` requests, then a little more to see that no more arrive. */
async function received(tail: Tail, count: number): Promise<Array<Record<string, any>>> {
  await eventually(
    async () => tail.requests().length,
    (length) => length >= count,
    3000,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  return tail.requests();
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function accountWithSubuser(): Promise<{ account: TestAccount; subuser: TestSubuser; name: string }> {
  const account = await createAccount();
  const subuser = await createSubuser(account);
  return { account, subuser, name: username(subuser.name) };
}

async function post(records: RecordFields[]): Promise<void> {
  const response = await reportUsage(records);
  expect(response.status).toBe(202);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("live tail of the request log (GET /v1/{product}/requests/tail)", () => {
  it("streams a usage post's records within 2 s, before the usage queue has run", async () => {
    const { account, subuser, name } = await accountWithSubuser();
    const { tail } = await openTail(account);
    await eventually(
      async () => tail.frames[0]?.type,
      (type) => type === "hello",
    );
    expect(tail.frames[0]).toEqual({ type: "hello", ack_every: 50, max_unacked: 1000 });
    const held = holdUsageMessages();
    const posted = Date.now();
    await post([
      usageRecord(name, {
        request_id: "req_tailfirst1",
        target_host: "api.example.com",
        status: 502,
        error_code: "upstream-timeout",
        tag: "scraper",
      }),
    ]);
    await eventually(
      async () => tail.requests().length,
      (length) => length === 1,
      2000,
    );
    expect(Date.now() - posted).toBeLessThan(2000);
    const [record] = await received(tail, 1);
    expect(held.sent.length).toBeGreaterThan(0);
    expect(record).toEqual({
      request_id: "req_tailfirst1",
      ts: expect.any(String),
      product: "residential",
      subuser: subuser.id,
      method: "GET",
      target_host: "api.example.com",
      status: 502,
      bytes: 1100,
      exit_ip: "203.0.113.5",
      exit_geo: "us/ca/la",
      exit_asn: 7922,
      tag: "scraper",
      error_code: "upstream-timeout",
    });
    expect(tail.frames[1]).toMatchObject({ type: "request", seq: 1 });
    tail.socket.close();
  });

  it("filters by sub-user, domain, status (exact or class) and error code", async () => {
    const { account, subuser, name } = await accountWithSubuser();
    const other = await createSubuser(account);
    const tails = {
      subuser: (await openTail(account, `?subuser=${subuser.id}`)).tail,
      domain: (await openTail(account, "?domain=Example.ORG")).tail,
      notFound: (await openTail(account, "?status=404")).tail,
      serverErrors: (await openTail(account, "?status=5xx")).tail,
      errorCode: (await openTail(account, "?error_code=connect-failed")).tail,
    };
    await post([
      usageRecord(name, { request_id: "req_filter1", target_host: "example.org", status: 404 }),
      usageRecord(name, { request_id: "req_filter2", target_host: "shop.example.org", status: 503 }),
      usageRecord(username(other.name), { request_id: "req_filter3", target_host: "notexample.org", status: 200 }),
      usageRecord(username(other.name), {
        request_id: "req_filter4",
        target_host: "example.com",
        status: 502,
        error_code: "connect-failed",
      }),
    ]);
    const ids = async (tail: Tail, count: number) => (await received(tail, count)).map((r) => r.request_id).sort();
    expect(await ids(tails.subuser, 2)).toEqual(["req_filter1", "req_filter2"]);
    expect(await ids(tails.domain, 2)).toEqual(["req_filter1", "req_filter2"]);
    expect(await ids(tails.notFound, 1)).toEqual(["req_filter1"]);
    expect(await ids(tails.serverErrors, 2)).toEqual(["req_filter2", "req_filter4"]);
    expect(await ids(tails.errorCode, 1)).toEqual(["req_filter4"]);
    for (const tail of Object.values(tails)) tail.socket.close();
  });

  it("a product's tail shows that product's records alone", async () => {
    const account = await createAccount();
    const both = await createSubuser(account, { products: ["residential", "mobile"] });
    const { tail: mobile } = await openTail(account, "", { product: "mobile" });
    await post([
      usageRecord(username(both.name), { request_id: "req_productres" }),
      usageRecord(username(both.name, "type-mob-region-us"), { request_id: "req_productmob", product: "mobile" }),
    ]);
    expect((await received(mobile, 1)).map((r) => r.request_id)).toEqual(["req_productmob"]);
    mobile.socket.close();
  });

  it("a browser's key in the bearer.<key> subprotocol is accepted, and the answer selects `tail`", async () => {
    const { account, name } = await accountWithSubuser();
    const { tail, response } = await openTail(account, "", {
      headers: { "Sec-WebSocket-Protocol": `tail, bearer.${account.token}` },
    });
    expect(response.headers.get("Sec-WebSocket-Protocol")).toBe("tail");
    await post([usageRecord(name, { request_id: "req_subprotocol1" })]);
    expect((await received(tail, 1)).map((r) => r.request_id)).toEqual(["req_subprotocol1"]);
    tail.socket.close();
  });

  it("a bad key is 401, in the header or the subprotocol", async () => {
    const account = await createAccount();
    const badToken = `live_${"0".repeat(64)}`;
    const inHeader = await tailRequest({ ...account, token: badToken });
    expect(inHeader.status).toBe(401);
    expect((await json(inHeader)).code).toBe("unauthorized");
    const inProtocol = await tailRequest(account, "", {
      headers: { "Sec-WebSocket-Protocol": `tail, bearer.${badToken}` },
    });
    expect(inProtocol.status).toBe(401);
    // The subprotocol carries a key on WebSocket upgrades only.
    const plain = await call("GET", "/v1/residential/requests", {
      headers: { "Sec-WebSocket-Protocol": `tail, bearer.${account.token}` },
    });
    expect(plain.status).toBe(401);
  });

  it("needs the traffic:read scope (403 insufficient_scope) and a key covering the product (403 subuser_scope_mismatch)", async () => {
    const account = await createAccount();
    const created = await call("POST", "/v1/api-keys", { token: account.token, body: { scopes: { billing: "read" } } });
    const billingOnly = (await json(created)).token as string;
    const noScope = await tailRequest({ ...account, token: billingOnly });
    expect(noScope.status).toBe(403);
    expect((await json(noScope)).code).toBe("insufficient_scope");

    const mobileOnly = await issueKey(account.id, ["mobile"]);
    const outOfScope = await tailRequest({ ...account, token: mobileOnly.token });
    expect(outOfScope.status).toBe(403);
    expect((await json(outOfScope)).code).toBe("subuser_scope_mismatch");
  });

  it("shows nothing of another account: its sub-user is 404 as a filter, its usage never reaches the tail", async () => {
    const mine = await accountWithSubuser();
    const theirs = await accountWithSubuser();
    const foreign = await tailRequest(mine.account, `?subuser=${theirs.subuser.id}`);
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).code).toBe("subuser_not_found");

    const { tail } = await openTail(mine.account);
    const { tail: theirTail } = await openTail(theirs.account);
    await post([usageRecord(theirs.name, { request_id: "req_theirs1" })]);
    await received(theirTail, 1);
    await post([usageRecord(mine.name, { request_id: "req_mine1" })]);
    expect((await received(tail, 1)).map((r) => r.request_id)).toEqual(["req_mine1"]);
    tail.socket.close();
    theirTail.socket.close();
  });

  it("a plain request is 426 websocket_required; bad filters are 422 before any upgrade", async () => {
    const account = await createAccount();
    const plain = await call("GET", "/v1/residential/requests/tail", { token: account.token });
    expect(plain.status).toBe(426);
    expect(await json(plain)).toMatchObject({
      code: "websocket_required",
      doc_url: expect.stringMatching(/#websocket_required$/),
    });
    for (const query of ["?status=4x", "?status=1000", "?domain=-bad-", "?error_code=Upstream", "?subuser="]) {
      const bad = await tailRequest(account, query);
      expect(bad.status, query).toBe(422);
      expect((await json(bad)).code, query).toBe("invalid_request");
    }
    expect((await tailRequest(account, "", { product: "dialup" })).status).toBe(422);
  });

  it("an account has at most 5 tails open: the sixth is 409 tail_limit, and closing one frees a place", async () => {
    const account = await createAccount();
    const tails = [];
    for (let i = 0; i < 5; i++) tails.push((await openTail(account)).tail);
    const sixth = await tailRequest(account);
    expect(sixth.status).toBe(409);
    expect(await json(sixth)).toMatchObject({ code: "tail_limit", limit: 5, current: 5 });
    tails[0]?.socket.close(1000, "done");
    const reopened = await eventually(
      () => tailRequest(account),
      (response) => response.status === 101,
      3000,
    );
    (reopened.webSocket as WebSocket).accept();
    (reopened.webSocket as WebSocket).close();
    for (const tail of tails.slice(1)) tail.socket.close();
  });

  it("a viewer that stops acknowledging is closed with 1008 after 1,000 records; one that acknowledges gets them all", async () => {
    const { account, name } = await accountWithSubuser();
    const { tail: silent } = await openTail(account);
    const { tail: acking } = await openTail(account);
    acking.socket.addEventListener("message", (event) => {
      const frame = JSON.parse(event.data as string) as Frame;
      if (frame.type === "request" && frame.seq !== undefined && frame.seq % 50 === 0) acking.ack(frame.seq);
    });
    // 1,000 records over 10 minutes: a batch samples at most 100 a minute, so each is on the tail.
    const batch = (n: number) =>
      Array.from({ length: 1000 }, (_, i) =>
        usageRecord(name, {
          request_id: `req_slow${n}x${i}`,
          ts: new Date(Date.now() - (i % 10) * 60_000).toISOString(),
        }),
      );
    await post(batch(1));
    await received(acking, 1000);
    await post(batch(2));
    expect(await silent.closed).toEqual({ code: 1008, reason: expect.stringContaining("acknowledge") });
    expect(silent.requests()).toHaveLength(1000);
    expect(await received(acking, 2000)).toHaveLength(2000);
    acking.socket.close();
  });

  it("an account without an open tail costs the usage post no call; its last tail closed, one delivery unlists it", async () => {
    const deliver = vi.spyOn(RequestTailClient.prototype, "deliver");
    const { account, name } = await accountWithSubuser();
    await post([usageRecord(name)]);
    await pause(300);
    expect(deliver).not.toHaveBeenCalled();

    const { tail } = await openTail(account);
    await post([usageRecord(name)]);
    await received(tail, 1);
    expect(deliver).toHaveBeenCalledTimes(1);
    tail.socket.close();
    await pause(300);
    await post([usageRecord(name)]);
    await eventually(
      async () => deliver.mock.results.length,
      (calls) => calls === 2,
    );
    expect(await deliver.mock.results[1]?.value).toBe(0);
    await pause(300);
    await post([usageRecord(name)]);
    await pause(300);
    expect(deliver).toHaveBeenCalledTimes(2);
  });
});

describe("a tail lives no longer than the key that opened it", () => {
  /** A new key of the account, made with its full key. */
  async function newKey(
    account: TestAccount,
    body: Record<string, unknown> = {},
  ): Promise<TestAccount & { keyId: string }> {
    const response = await call("POST", "/v1/api-keys", { token: account.token, body });
    expect(response.status).toBe(201);
    const key = await json(response);
    return { ...account, token: key.token, keyId: key.id };
  }

  /** How long after `from` the tail closed, and with what. */
  async function closedAfter(tail: Tail, from: number): Promise<{ code: number; reason: string; ms: number }> {
    const closed = await Promise.race([tail.closed, pause(5000).then(() => null)]);
    if (!closed) throw new Error("the tail stayed open");
    return { ...closed, ms: Date.now() - from };
  }

  it("revoking the key closes its open tail within 1 s with 4001 api_key_revoked; nothing reaches it after", async () => {
    const { account, name } = await accountWithSubuser();
    const key = await newKey(account);
    const { tail } = await openTail(key);
    const { tail: other } = await openTail(account);
    const revokedAt = Date.now();
    expect((await call("DELETE", `/v1/api-keys/${key.keyId}`, { token: account.token })).status).toBe(200);
    const closed = await closedAfter(tail, revokedAt);
    console.log(`tail closed ${closed.ms} ms after the revocation was asked for`);
    expect(closed.code).toBe(4001);
    expect(closed.reason).toMatch(/^api_key_revoked/);
    expect(closed.ms).toBeLessThanOrEqual(1000);
    await post([usageRecord(name)]);
    await received(other, 1);
    expect(tail.requests()).toEqual([]);
    // A new tail with the revoked key is refused.
    expect((await tailRequest(key)).status).toBe(401);
    other.socket.close();
  });

  it("a key's expiry closes its tail within 1 s of expires_at with 4002 api_key_expired", async () => {
    const { account } = await accountWithSubuser();
    const expiresAt = Math.ceil((Date.now() + 2500) / 1000) * 1000;
    const key = await newKey(account, { expires_at: new Date(expiresAt).toISOString() });
    const { tail } = await openTail(key);
    const closed = await closedAfter(tail, expiresAt);
    console.log(`tail closed ${closed.ms} ms after the key's expires_at`);
    expect(closed.code).toBe(4002);
    expect(closed.reason).toMatch(/^api_key_expired/);
    expect(closed.ms).toBeGreaterThanOrEqual(0);
    expect(closed.ms).toBeLessThanOrEqual(1000);
  });

  it("rotating the key closes tails of the replaced token when its grace ends (4003 api_key_rotated); the new token's stay", async () => {
    const { account } = await accountWithSubuser();
    const key = await newKey(account);
    const { tail: atOnce } = await openTail(key);
    const rotatedAt = Date.now();
    const rotation = await call("POST", `/v1/api-keys/${key.keyId}/rotate`, {
      token: account.token,
      body: { grace_seconds: 0 },
    });
    expect(rotation.status).toBe(200);
    const closed = await closedAfter(atOnce, rotatedAt);
    expect(closed.code).toBe(4003);
    expect(closed.reason).toMatch(/^api_key_rotated/);
    expect(closed.ms).toBeLessThanOrEqual(1000);

    // With a grace: the replaced token's tail ends with it, the new token's tail stays open.
    const current = { ...key, token: (await json(rotation)).token };
    const { tail: replaced } = await openTail(current);
    const graced = await json(
      await call("POST", `/v1/api-keys/${key.keyId}/rotate`, { token: account.token, body: { grace_seconds: 2 } }),
    );
    const graceEnds = Date.parse(graced.previous_token_expires_at);
    const { tail: fresh } = await openTail({ ...key, token: graced.token });
    const ended = await closedAfter(replaced, graceEnds);
    expect(ended.code).toBe(4003);
    expect(ended.ms).toBeLessThanOrEqual(1000);
    await pause(300);
    expect(fresh.socket.readyState).toBe(WebSocket.OPEN);
    fresh.socket.close();
  });

  it("a key that loses the product or traffic:read closes its tail with 4004 insufficient_scope", async () => {
    const { account } = await accountWithSubuser();
    const key = await newKey(account);
    const { tail: residential } = await openTail(key);
    const { tail: mobile } = await openTail(key, "", { product: "mobile" });
    const changedAt = Date.now();
    const narrowed = await call("PATCH", `/v1/api-keys/${key.keyId}`, {
      token: account.token,
      body: { products: ["mobile", "isp"] },
    });
    expect(narrowed.status).toBe(200);
    const closed = await closedAfter(residential, changedAt);
    expect(closed.code).toBe(4004);
    expect(closed.ms).toBeLessThanOrEqual(1000);
    await pause(300);
    expect(mobile.socket.readyState).toBe(WebSocket.OPEN);
    expect(
      (
        await call("PATCH", `/v1/api-keys/${key.keyId}`, {
          token: account.token,
          body: { scopes: { billing: "read" } },
        })
      ).status,
    ).toBe(200);
    expect((await closedAfter(mobile, changedAt)).code).toBe(4004);
  });
});

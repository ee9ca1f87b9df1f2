import { exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  ApiError,
  type ClientOptions,
  createProxyAccountClient,
  type Fetch,
  type RetryOptions,
} from "../../clients/typescript/src";
import { createAccount } from "../helpers/accounts";
import { admin, BASE, call } from "../helpers/http";

const T0 = Date.UTC(2026, 10, 23, 12, 0, 0);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const toWorker: Fetch = (request) => exports.default.fetch(request);

/** A client of the worker that records every request it sends and every wait it asks for (no real waiting). */
function clientOf(apiKey: string, options: { fetch?: Fetch; retry?: Partial<RetryOptions>; moveClock?: boolean } = {}) {
  const sent: Request[] = [];
  const waits: number[] = [];
  const send = options.fetch ?? toWorker;
  const config: ClientOptions = {
    apiKey,
    baseUrl: `${BASE}/v1`,
    fetch: (request) => {
      sent.push(request.clone());
      return send(request);
    },
    retry: {
      random: () => 0.5,
      sleep: async (ms) => {
        waits.push(ms);
        if (options.moveClock) vi.setSystemTime(Date.now() + ms);
      },
      ...options.retry,
    },
  };
  return { client: createProxyAccountClient(config), sent, waits };
}

/** A fake server answer with the API's error body. */
function errorAnswer(status: number, code: string, headers: Record<string, string> = {}): Response {
  return Response.json({ code, message: `fake ${code}`, request_id: "req_fake" }, { status, headers });
}

async function rejectionOf(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

let label = 0;
const newLabel = () => `client-${++label}`;

describe("typed client: auth and errors", () => {
  it("sends the API key as a Bearer token and resolves to the typed success body", async () => {
    const account = await createAccount();
    const { client, sent } = clientOf(account.token);
    const me = await client.get("/users/me");
    expect(me.id).toBe(account.id);
    expect(me.email).toBe(account.email);
    expect(sent[0]!.headers.get("Authorization")).toBe(`Bearer ${account.token}`);
  });

  it("a wrong key surfaces as ApiError 401 unauthorized with the response's request id and the code's doc_url", async () => {
    const { client, sent } = clientOf("live_not-a-real-key");
    const error = await rejectionOf(client.get("/users/me"));
    expect(error.status).toBe(401);
    expect(error.code).toBe("unauthorized");
    expect(error.doc_url).toMatch(/\/docs\/errors#unauthorized$/);
    expect(error.request_id).toMatch(/^req_/);
    expect(error.request_id).toBe(error.response.headers.get("X-Request-Id"));
    expect(sent).toHaveLength(1);
  });

  it("another account's sub-user is ApiError 404 subuser_not_found, like a missing one", async () => {
    const owner = await createAccount();
    const stranger = await createAccount();
    const subuser = await clientOf(owner.token).client.post("/subusers", {
      body: { label: newLabel(), products: ["residential"] },
    });
    const error = await rejectionOf(
      clientOf(stranger.token).client.get("/subusers/{id}", { params: { path: { id: subuser.id } } }),
    );
    expect(error.status).toBe(404);
    expect(error.code).toBe("subuser_not_found");
  });

  it("bad input is ApiError 422 invalid_request with the field problems, and is not retried", async () => {
    const account = await createAccount();
    const { client, sent } = clientOf(account.token);
    const error = await rejectionOf(
      client.post("/subusers", { body: { label: "Not Valid!", products: ["residential"] } }),
    );
    expect(error.status).toBe(422);
    expect(error.code).toBe("invalid_request");
    expect(error.details?.map((problem) => problem.field)).toContain("label");
    expect(sent).toHaveLength(1);
  });

  it("an answer that is not the API's JSON surfaces as unexpected_response with its status", async () => {
    const fakeProxy: Fetch = async () => new Response("<html>Bad gateway</html>", { status: 502 });
    const { client } = clientOf("live_any", { fetch: fakeProxy, retry: { maxAttempts: 1 } });
    const error = await rejectionOf(client.get("/users/me"));
    expect(error.status).toBe(502);
    expect(error.code).toBe("unexpected_response");
    expect(error.request_id).toBeNull();
  });
});

describe("typed client: idempotency keys", () => {
  it("gives every write a fresh UUID Idempotency-Key and reads none", async () => {
    const account = await createAccount();
    const { client, sent } = clientOf(account.token);
    const created = await client.post("/subusers", { body: { label: newLabel(), products: ["residential"] } });
    await client.patch("/subusers/{id}", { params: { path: { id: created.id } }, body: { label: newLabel() } });
    await client.get("/subusers/{id}", { params: { path: { id: created.id } } });
    const [post, patch, get] = sent.map((request) => request.headers.get("Idempotency-Key"));
    expect(post).toMatch(UUID);
    expect(patch).toMatch(UUID);
    expect(patch).not.toBe(post);
    expect(get).toBeNull();
  });

  it("keeps an Idempotency-Key the caller gives, so the caller's own retry replays", async () => {
    const account = await createAccount();
    const { client, sent } = clientOf(account.token);
    const body = { label: newLabel(), products: ["residential" as const] };
    const headers = { "Idempotency-Key": "order-42" };
    const first = await client.raw.POST("/subusers", { body, headers });
    const again = await client.raw.POST("/subusers", { body, headers });
    expect(sent.map((request) => request.headers.get("Idempotency-Key"))).toEqual(["order-42", "order-42"]);
    expect(again.response.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.data?.id).toBe(first.data?.id);
  });

  it("a write whose answer was lost is retried with the same key and takes effect once", async () => {
    const account = await createAccount();
    // The first attempt reaches the worker, but its answer is lost on the way back (the client sees a 503).
    let attempts = 0;
    const losesFirstAnswer: Fetch = async (request) => {
      const response = await toWorker(request);
      return ++attempts === 1 ? errorAnswer(503, "internal_error") : response;
    };
    const { client, sent, waits } = clientOf(account.token, { fetch: losesFirstAnswer });
    const wanted = newLabel();
    const created = await client.post("/subusers", { body: { label: wanted, products: ["residential"] } });

    expect(sent).toHaveLength(2);
    const keys = sent.map((request) => request.headers.get("Idempotency-Key"));
    expect(keys[0]).toMatch(UUID);
    expect(keys[1]).toBe(keys[0]);
    expect(waits).toEqual([250]);
    expect(created.label).toBe(wanted);
    const all = await client.get("/subusers", { params: { query: { label_contains: wanted } } });
    expect(all.data.map((subuser) => subuser.id)).toEqual([created.id]);
  });
});

describe("typed client: retries", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("on the real 429, waits exactly Retry-After and then succeeds", async () => {
    const account = await createAccount({ plan: "trial" });
    for (let i = 0; i < 30; i++) {
      vi.setSystemTime(T0 + i * 1000);
      expect((await call("GET", "/v1/users/me", { token: account.token })).status).toBe(200);
    }
    vi.setSystemTime(T0 + 40_000);
    const { client, sent, waits } = clientOf(account.token, { moveClock: true });
    const me = await client.get("/users/me");
    expect(me.id).toBe(account.id);
    expect(waits).toEqual([20_000]);
    expect(sent).toHaveLength(2);
  });

  it("does not wait for a Retry-After beyond 30 s: rate_limited surfaces at once", async () => {
    const account = await createAccount({ plan: "trial" });
    await admin("PATCH", `/accounts/${account.id}`, { limits: { api_daily: 1 } });
    const { client, sent, waits } = clientOf(account.token, { moveClock: true });
    await client.get("/users/me");
    const error = await rejectionOf(client.get("/users/me"));
    expect(error.status).toBe(429);
    expect(error.code).toBe("rate_limited");
    expect(Number(error.response.headers.get("Retry-After"))).toBeGreaterThan(30);
    expect(waits).toEqual([]);
    expect(sent).toHaveLength(2);
  });

  it("retries 5xx with exponential backoff and full jitter until an answer succeeds", async () => {
    const account = await createAccount();
    const answers = [errorAnswer(500, "internal_error"), errorAnswer(503, "internal_error")];
    const flaky: Fetch = async (request) => answers.shift() ?? toWorker(request);
    const { client, sent, waits } = clientOf(account.token, { fetch: flaky });
    const me = await client.get("/users/me");
    expect(me.id).toBe(account.id);
    expect(sent).toHaveLength(3);
    // random() = 0.5 of ceilings 500 ms, then 1,000 ms.
    expect(waits).toEqual([250, 500]);
  });

  it("gives up after maxAttempts and throws the last answer as ApiError", async () => {
    const down: Fetch = async () => errorAnswer(503, "internal_error");
    const { client, sent, waits } = clientOf("live_any", { fetch: down, retry: { maxAttempts: 3 } });
    const error = await rejectionOf(client.get("/users/me"));
    expect(error.status).toBe(503);
    expect(error.code).toBe("internal_error");
    expect(error.request_id).toBe("req_fake");
    expect(sent).toHaveLength(3);
    expect(waits).toHaveLength(2);
  });

  it("honours Retry-After given as an HTTP date", async () => {
    const account = await createAccount();
    const answers = [errorAnswer(503, "internal_error", { "Retry-After": new Date(T0 + 3_000).toUTCString() })];
    const flaky: Fetch = async (request) => answers.shift() ?? toWorker(request);
    const { client, waits } = clientOf(account.token, { fetch: flaky });
    await client.get("/users/me");
    expect(waits).toEqual([3_000]);
  });

  it("retries a network failure, and the write keeps its key", async () => {
    const account = await createAccount();
    let attempts = 0;
    const dropsFirst: Fetch = async (request) => {
      if (++attempts === 1) throw new TypeError("Network connection lost.");
      return toWorker(request);
    };
    const { client, sent } = clientOf(account.token, { fetch: dropsFirst });
    await client.post("/subusers", { body: { label: newLabel(), products: ["residential"] } });
    expect(sent).toHaveLength(2);
    expect(sent[1]!.headers.get("Idempotency-Key")).toBe(sent[0]!.headers.get("Idempotency-Key"));
  });

  it("does not retry a request the caller aborted", async () => {
    const controller = new AbortController();
    const aborting: Fetch = async () => {
      controller.abort();
      throw new DOMException("The operation was aborted.", "AbortError");
    };
    const { client, sent } = clientOf("live_any", { fetch: aborting });
    await expect(client.get("/users/me", { signal: controller.signal })).rejects.toThrow(/aborted/);
    expect(sent).toHaveLength(1);
  });
});

describe("typed client: pagination", () => {
  it("paginate yields every item across pages, following next_cursor with the caller's filters", async () => {
    const account = await createAccount();
    const { client: writer } = clientOf(account.token);
    const residential: string[] = [];
    for (let i = 0; i < 5; i++) {
      const subuser = await writer.post("/subusers", { body: { label: newLabel(), products: ["residential"] } });
      residential.push(subuser.id);
    }
    await writer.post("/subusers", { body: { label: newLabel(), products: ["mobile"] } });

    const { client, sent } = clientOf(account.token);
    const seen: string[] = [];
    for await (const subuser of client.paginate("/subusers", {
      params: { query: { product: "residential", limit: 2 } },
    })) {
      expect(subuser.products).toEqual(["residential"]);
      seen.push(subuser.id);
    }
    expect(seen).toEqual([...residential].reverse());
    expect(sent).toHaveLength(3);
    const queries = sent.map((request) => new URL(request.url).searchParams);
    expect(queries.map((query) => query.get("product"))).toEqual(["residential", "residential", "residential"]);
    expect(queries.map((query) => query.get("limit"))).toEqual(["2", "2", "2"]);
    expect(queries[0]!.get("cursor")).toBeNull();
    expect(queries[1]!.get("cursor")).not.toBeNull();
  });

  it("an empty list yields nothing after one request", async () => {
    const account = await createAccount();
    const { client, sent } = clientOf(account.token);
    const items = [];
    for await (const subuser of client.paginate("/subusers")) items.push(subuser);
    expect(items).toEqual([]);
    expect(sent).toHaveLength(1);
  });
});

import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, json } from "../helpers/http";

async function expectUnauthorized(response: Response) {
  expect(response.status).toBe(401);
  const body = await json(response);
  expect(body.code).toBe("unauthorized");
  expect(body.request_id).toMatch(/^req_/);
  expect(response.headers.get("X-Request-Id")).toBe(body.request_id);
}

describe("API-key authentication (spec §5)", () => {
  it("rejects a missing Authorization header with 401 unauthorized", async () => {
    await expectUnauthorized(await call("GET", "/v1/users/me"));
  });

  it("rejects a malformed header or token with 401", async () => {
    await expectUnauthorized(await call("GET", "/v1/users/me", { headers: { Authorization: "Basic abc" } }));
    await expectUnauthorized(await call("GET", "/v1/users/me", { token: "not-a-key" }));
    await expectUnauthorized(await call("GET", "/v1/users/me", { token: `test_${"a".repeat(64)}` }));
  });

  it("rejects a well-formed but unknown token with 401", async () => {
    await expectUnauthorized(await call("GET", "/v1/users/me", { token: `live_${"A".repeat(64)}` }));
  });

  it("rejects a revoked key on its very next call, and keeps other keys working", async () => {
    const account = await createAccount();
    const other = await admin("POST", `/accounts/${account.id}/api-keys`, {});
    const otherKey = await json(other);
    expect((await call("GET", "/v1/users/me", { token: account.token })).status).toBe(200);

    const revoked = await admin("DELETE", `/api-keys/${account.keyId}`);
    expect(revoked.status).toBe(200);
    expect(await json(revoked)).toEqual({ id: account.keyId, revoked: true });
    await expectUnauthorized(await call("GET", "/v1/users/me", { token: account.token }));
    expect((await call("GET", "/v1/users/me", { token: otherKey.token })).status).toBe(200);
  });

  it("accepts the scheme name case-insensitively", async () => {
    const account = await createAccount();
    const response = await call("GET", "/v1/users/me", { headers: { Authorization: `bearer ${account.token}` } });
    expect(response.status).toBe(200);
  });
});

describe("calls without a valid key are rate limited per client address", () => {
  it("answers 401 with the address's X-RateLimit-* headers, then 429 with Retry-After past 60 a minute", async () => {
    const headers = { "CF-Connecting-IP": "192.0.2.77" };
    const first = await call("GET", "/v1/users/me", { headers });
    expect(first.status).toBe(401);
    expect(first.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("59");
    for (let i = 1; i < 60; i++) await call("GET", "/v1/users/me", { headers, token: `live_${"B".repeat(64)}` });
    const limited = await call("GET", "/v1/users/me", { headers });
    expect(limited.status).toBe(429);
    expect((await json(limited)).code).toBe("rate_limited");
    expect(Number(limited.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(Number(limited.headers.get("Retry-After"))).toBeLessThanOrEqual(60);
    // Another address, and valid keys, are not affected.
    expect((await call("GET", "/v1/users/me", { headers: { "CF-Connecting-IP": "192.0.2.78" } })).status).toBe(401);
    const account = await createAccount();
    expect((await call("GET", "/v1/users/me", { headers, token: account.token })).status).toBe(200);
  });
});

describe("admin API authentication", () => {
  it("answers 401 without, or with a wrong, ADMIN_TOKEN", async () => {
    await expectUnauthorized(await call("GET", "/internal/admin/accounts"));
    await expectUnauthorized(await call("GET", "/internal/admin/accounts", { token: "wrong" }));
  });

  it("does not accept an API key as the admin token", async () => {
    const account = await createAccount();
    await expectUnauthorized(await call("GET", "/internal/admin/accounts", { token: account.token }));
  });
});

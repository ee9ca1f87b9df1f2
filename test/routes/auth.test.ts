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

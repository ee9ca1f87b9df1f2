import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, gateway, json } from "../helpers/http";
import { authorize, createSubuser, username } from "../helpers/subusers";

// In the future of the real clock: alarms the gate sets on this clock wait (one set in the past would ring at once).
const T0 = Date.UTC(2027, 0, 21, 12, 0, 0);

describe("gateway contract authentication", () => {
  it("requires GATEWAY_TOKEN (401 otherwise, and the admin token does not do)", async () => {
    const body = { username: "user_x-type-res-region-us", source_ip: "198.51.100.1", product: "residential" };
    expect((await call("POST", "/internal/gateway/authorize", { body })).status).toBe(401);
    expect((await call("POST", "/internal/gateway/authorize", { token: "test-admin-token", body })).status).toBe(401);
  });

  it("validates the request: bad source_ip → 422 invalid_request", async () => {
    const response = await gateway("/authorize", {
      username: "user_x-type-res-region-us",
      source_ip: "nope",
      product: "residential",
    });
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe("invalid_request");
  });
});

describe("POST /internal/gateway/authorize", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
  });
  afterEach(() => vi.useRealTimers());

  it("allows the right password and returns subuser, product, lease, cache_ttl_s and the parsed target", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const decision = await authorize({
      username: username(subuser.name, "type-res-region-us-state-ca-city-la-asn-7922-session-abc1-sesstime-10"),
      password: subuser.password,
    });
    expect(decision).toMatchObject({
      allow: true,
      subuser: subuser.id,
      product: "residential",
      target: { type: "res", region: "us", state: "ca", city: "la", asn: 7922, session_id: "abc1", sesstime: 10 },
    });
    expect(decision.lease).toMatch(new RegExp(`^${subuser.name}\\.`));
    expect(decision.cache_ttl_s).toBeGreaterThan(0);
    expect(decision.cache_ttl_s).toBeLessThanOrEqual(60);
  });

  it.each([
    ["user_nobody", "bad-username"],
    ["user_abc-type-res-region-xx", "unknown-region"],
    ["user_abc-type-res-state-ca", "state-without-region"],
    ["user_abc-type-res-region-us-city-la", "city-without-state"],
    ["user_abc-type-res-region-us-session-a1", "session-incomplete"],
    ["user_abc-type-res-region-us-session-a1-sesstime-31", "sesstime-out-of-range"],
    ["wrong_abc-type-res-region-us", "bad-username"],
  ])("%s → 400 %s", async (name, code) => {
    expect(await authorize({ username: name, password: "x" })).toEqual({ allow: false, status: 400, error_code: code });
  });

  it("answers 407 auth-failed for a wrong password or an unknown name", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    expect(await authorize({ username: username(subuser.name), password: "wrong" })).toEqual({
      allow: false,
      status: 407,
      error_code: "auth-failed",
    });
    expect(await authorize({ username: username("snobody12345"), password: "x" })).toMatchObject({
      status: 407,
      error_code: "auth-failed",
    });
  });

  it("lets a whitelisted source IP omit the password, for that product only; others get 407 not-whitelisted", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
    await call("POST", "/v1/whitelists", {
      token: account.token,
      body: { subuser: subuser.id, product: "residential", ip: "203.0.113.0/24" },
    });
    expect(await authorize({ username: username(subuser.name), source_ip: "203.0.113.77" })).toMatchObject({
      allow: true,
    });
    expect(await authorize({ username: username(subuser.name), source_ip: "203.0.114.1" })).toEqual({
      allow: false,
      status: 407,
      error_code: "not-whitelisted",
    });
    const mobile = await authorize({
      username: username(subuser.name, "type-mob-region-us"),
      source_ip: "203.0.113.77",
      product: "mobile",
    });
    expect(mobile).toMatchObject({ allow: false, status: 407, error_code: "not-whitelisted" });
  });

  it("whitelist removal takes effect on the next decision", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const entry = await json(
      await call("POST", "/v1/whitelists", {
        token: account.token,
        body: { subuser: subuser.id, product: "residential", ip: "2001:db8::/64" },
      }),
    );
    expect((await authorize({ username: username(subuser.name), source_ip: "2001:db8::5" })).allow).toBe(true);
    await call("DELETE", `/v1/whitelists/${entry.id}`, { token: account.token });
    expect(await authorize({ username: username(subuser.name), source_ip: "2001:db8::5" })).toMatchObject({
      error_code: "not-whitelisted",
    });
  });

  it("disable → 403 subuser-disabled; enable → allowed again; delete → 407 auth-failed", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const request = { username: username(subuser.name), password: subuser.password };
    await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { status: "disabled" } });
    expect(await authorize(request)).toEqual({ allow: false, status: 403, error_code: "subuser-disabled" });
    await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { status: "active" } });
    expect((await authorize(request)).allow).toBe(true);
    await call("DELETE", `/v1/subusers/${subuser.id}`, { token: account.token });
    expect(await authorize(request)).toEqual({ allow: false, status: 407, error_code: "auth-failed" });
  });

  it("403 product-not-allowed for a product the sub-user lacks; 400 when the username's type contradicts the product", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { products: ["residential"] });
    const mobile = await authorize({
      username: username(subuser.name, "type-mob-region-us"),
      password: subuser.password,
      product: "mobile",
    });
    expect(mobile).toEqual({ allow: false, status: 403, error_code: "product-not-allowed" });
    const contradiction = await authorize({
      username: username(subuser.name, "type-mob-region-us"),
      password: subuser.password,
      product: "residential",
    });
    expect(contradiction).toMatchObject({ status: 400, error_code: "bad-username" });
  });

  it("keeps a rotated-out password working for exactly 60 seconds (+59 s ok, +61 s 407)", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const rotated = await json(
      await call("POST", `/v1/subusers/${subuser.id}/rotate-password`, { token: account.token }),
    );
    expect(rotated.previous_password_expires_at).toBe(new Date(T0 + 60_000).toISOString());
    const old = { username: username(subuser.name), password: subuser.password };
    const fresh = { username: username(subuser.name), password: rotated.password };

    vi.setSystemTime(T0 + 59_000);
    const during = await authorize(old);
    expect(during.allow).toBe(true);
    expect(during.cache_ttl_s).toBeLessThanOrEqual(1);
    vi.setSystemTime(T0 + 61_000);
    expect(await authorize(old)).toEqual({ allow: false, status: 407, error_code: "auth-failed" });
    expect((await authorize(fresh)).allow).toBe(true);
  });

  it("enforces rps_max over a rolling second, exactly under concurrent calls, with 429 rps-limit / 30002", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { rps_max: 5 });
    const request = { username: username(subuser.name), password: subuser.password };
    const decisions = await Promise.all(Array.from({ length: 8 }, () => authorize(request)));
    expect(decisions.filter((d) => d.allow)).toHaveLength(5);
    const refused = decisions.filter((d) => !d.allow);
    expect(refused).toHaveLength(3);
    for (const decision of refused) {
      expect(decision).toEqual({
        allow: false,
        status: 429,
        error_code: "rps-limit",
        service_code: 30002,
        retry_after_s: 1,
      });
    }
    vi.setSystemTime(T0 + 1_000);
    expect((await authorize(request)).allow).toBe(true);
  });

  it("enforces concurrent_max with leases: exact under concurrency, existing leases continue, release frees a slot", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { concurrent_max: 3 });
    const request = { username: username(subuser.name), password: subuser.password };
    const decisions = await Promise.all(Array.from({ length: 5 }, () => authorize(request)));
    const leases = decisions.filter((d) => d.allow).map((d) => d.lease);
    expect(leases).toHaveLength(3);
    for (const refused of decisions.filter((d) => !d.allow)) {
      expect(refused).toMatchObject({ status: 429, error_code: "concurrent-limit", service_code: 30002 });
    }
    const release = await gateway("/release", { lease: leases[0] });
    expect(await json(release)).toEqual({ released: true });
    expect(await json(await gateway("/release", { lease: leases[0] }))).toEqual({ released: false });
    expect((await authorize(request)).allow).toBe(true);
    expect((await authorize(request)).allow).toBe(false);
  });

  it("reclaims leases a crashed gateway never released, after 10 minutes", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { concurrent_max: 1 });
    const request = { username: username(subuser.name), password: subuser.password };
    expect((await authorize(request)).allow).toBe(true);
    vi.setSystemTime(T0 + 5 * 60_000);
    expect((await authorize(request)).error_code).toBe("concurrent-limit");
    vi.setSystemTime(T0 + 10 * 60_000 + 1);
    expect((await authorize(request)).allow).toBe(true);
  });

  it("applies a PATCH of limits on the next decision", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { concurrent_max: 1 });
    const request = { username: username(subuser.name), password: subuser.password };
    await authorize(request);
    expect((await authorize(request)).allow).toBe(false);
    await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { concurrent_max: 2 } });
    expect((await authorize(request)).allow).toBe(true);
  });

  it("caps the sub-user's limits by the plan's current limits (a downgrade applies at once)", async () => {
    const account = await createAccount({ plan: "pro", bandwidthGb: 1 });
    const subuser = await createSubuser(account); // pro defaults: 600 concurrent, 1,000 rps
    await admin("PATCH", `/accounts/${account.id}`, { plan: "trial" }); // trial residential: 25 concurrent, 50 rps
    const request = { username: username(subuser.name), password: subuser.password };
    const decisions = await Promise.all(Array.from({ length: 60 }, () => authorize(request)));
    expect(decisions.filter((d) => d.allow)).toHaveLength(25);
    expect(decisions.filter((d) => d.error_code === "concurrent-limit")).toHaveLength(35);
  });

  it("release of a malformed or unknown lease is harmless", async () => {
    expect(await json(await gateway("/release", { lease: "nope" }))).toEqual({ released: false });
    expect(await json(await gateway("/release", { lease: "sabc.unknown" }))).toEqual({ released: false });
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, json } from "../helpers/http";

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

function getMe(token: string) {
  return call("GET", "/v1/users/me", { token });
}

async function statuses(responses: Promise<Response>[]) {
  const settled = await Promise.all(responses);
  return settled.map((r) => r.status);
}

describe("API rate limits per key (spec §8.1)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("Trial: 40 simultaneous requests give exactly 30 successes and 10 × 429", async () => {
    const account = await createAccount({ plan: "trial" });
    const results = await statuses(Array.from({ length: 40 }, () => getMe(account.token)));
    expect(results.filter((s) => s === 200)).toHaveLength(30);
    expect(results.filter((s) => s === 429)).toHaveLength(10);
  });

  it("answers 429 rate_limited with Retry-After matching X-RateLimit-Reset, and recovers when the window rolls", async () => {
    const account = await createAccount({ plan: "trial" });
    for (let i = 0; i < 30; i++) {
      vi.setSystemTime(T0 + i * 1000);
      expect((await getMe(account.token)).status).toBe(200);
    }
    vi.setSystemTime(T0 + 40_000);
    const limited = await getMe(account.token);
    expect(limited.status).toBe(429);
    const body = await json(limited);
    expect(body.code).toBe("rate_limited");
    expect(body.request_id).toBe(limited.headers.get("X-Request-Id"));
    const reset = Number(limited.headers.get("X-RateLimit-Reset"));
    expect(reset).toBe((T0 + 60_000) / 1000);
    expect(limited.headers.get("Retry-After")).toBe("20");
    expect(limited.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(limited.headers.get("X-RateLimit-Limit")).toBe("30");
    // The body carries the limit's figures and what raises it.
    expect(body).toMatchObject({ limit: 30, current: 30, limit_raised_by: expect.stringContaining("plan") });

    // Rolling, not fixed: at +60 s only the first request has left the window.
    vi.setSystemTime(T0 + 60_000);
    expect((await getMe(account.token)).status).toBe(200);
    expect((await getMe(account.token)).status).toBe(429);
    vi.setSystemTime(T0 + 61_000);
    expect((await getMe(account.token)).status).toBe(200);
  });

  it("a fresh burst of a 60-second window answers Retry-After 60 at most, and X-RateLimit-Reset agrees", async () => {
    const account = await createAccount({ plan: "trial" });
    vi.setSystemTime(T0 + 900);
    await statuses(Array.from({ length: 30 }, () => getMe(account.token)));
    vi.setSystemTime(T0 + 950);
    const limited = await getMe(account.token);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get("Retry-After"));
    const reset = Number(limited.headers.get("X-RateLimit-Reset"));
    expect(retryAfter).toBe(60);
    // Reset is the epoch second at which the oldest request (T0 + 0.9 s) has left: T0 + 61 s.
    expect(reset).toBe(T0 / 1000 + 61);
    expect(reset - Math.floor((T0 + 950) / 1000)).toBeLessThanOrEqual(retryAfter + 1);
  });

  it("puts X-RateLimit-* on every authenticated response, errors included", async () => {
    const account = await createAccount({ plan: "starter" });
    const first = await getMe(account.token);
    expect(first.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("59");
    expect(Number(first.headers.get("X-RateLimit-Reset"))).toBe(T0 / 1000 + 60);
    const notFound = await call("GET", "/v1/nope", { token: account.token });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("X-RateLimit-Remaining")).toBe("58");
  });

  it("Trial: the rolling 24-hour window admits 1,000 requests a day", async () => {
    const account = await createAccount({ plan: "trial" });
    // Lift the burst limit so the daily window is the one that binds.
    await admin("PATCH", `/accounts/${account.id}`, { limits: { api_burst_per_min: 100_000 } });
    for (let batch = 0; batch < 20; batch++) {
      const results = await statuses(Array.from({ length: 50 }, () => getMe(account.token)));
      expect(results.every((s) => s === 200)).toBe(true);
    }
    const limited = await getMe(account.token);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("X-RateLimit-Limit")).toBe("1000");
    // All 1,000 were counted at T0 (the clock stands still): the window frees exactly 24 h later.
    expect(Number(limited.headers.get("Retry-After"))).toBe(86_400);
    expect(Number(limited.headers.get("X-RateLimit-Reset"))).toBe(T0 / 1000 + 86_400);

    vi.setSystemTime(T0 + 86_400_000);
    expect((await getMe(account.token)).status).toBe(200);
  }, 30_000); // 1,002 requests: ~2 s alone, beyond the default 5 s on a loaded machine

  it("reports the daily window when it has the lower remaining", async () => {
    const account = await createAccount({ plan: "starter" });
    await admin("PATCH", `/accounts/${account.id}`, { limits: { api_daily: 5 } });
    const response = await getMe(account.token);
    expect(response.headers.get("X-RateLimit-Limit")).toBe("5");
    expect(response.headers.get("X-RateLimit-Remaining")).toBe("4");
  });

  it("Pro has no daily cap and 600 per minute; Business 1,200", async () => {
    const pro = await createAccount({ plan: "pro" });
    expect((await getMe(pro.token)).headers.get("X-RateLimit-Limit")).toBe("600");
    const business = await createAccount({ plan: "business" });
    expect((await getMe(business.token)).headers.get("X-RateLimit-Limit")).toBe("1200");
  });

  it("pay-as-you-go uses Starter's limits; enterprise uses its overrides", async () => {
    const payg = await createAccount({ plan: "pay-as-you-go" });
    expect((await getMe(payg.token)).headers.get("X-RateLimit-Limit")).toBe("60");
    const enterprise = await createAccount({ plan: "enterprise" });
    await admin("PATCH", `/accounts/${enterprise.id}`, { limits: { api_burst_per_min: 5000 } });
    expect((await getMe(enterprise.token)).headers.get("X-RateLimit-Limit")).toBe("5000");
  });

  it("applies a plan change by the admin API on the next call", async () => {
    const account = await createAccount({ plan: "trial" });
    expect((await getMe(account.token)).headers.get("X-RateLimit-Limit")).toBe("30");
    await admin("PATCH", `/accounts/${account.id}`, { plan: "pro" });
    expect((await getMe(account.token)).headers.get("X-RateLimit-Limit")).toBe("600");
  });

  it("limits each key separately", async () => {
    const account = await createAccount({ plan: "trial" });
    const second = await json(await admin("POST", `/accounts/${account.id}/api-keys`, {}));
    await statuses(Array.from({ length: 30 }, () => getMe(account.token)));
    expect((await getMe(account.token)).status).toBe(429);
    expect((await getMe(second.token)).status).toBe(200);
  });
});

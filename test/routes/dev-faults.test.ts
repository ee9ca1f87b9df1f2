import { createExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { createAccount } from "../helpers/accounts";
import { ADMIN_TOKEN, admin, BASE, call, env, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, reportUsage, traffic, usageRecord } from "../helpers/usage";

/** A call to the worker as a soak starts it: the var `FAULTS` on. */
function withFaults(method: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN) {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const request = new Request<unknown, IncomingRequestCfProperties>(`${BASE}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return worker.fetch(request, { ...env, FAULTS: "on" } as Cloudflare.Env, createExecutionContext());
}

describe("/internal/dev/faults (the soak's fault injection)", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("is not there without FAULTS: 404 whatever the method or token", async () => {
    for (const response of [
      await admin("POST", "/dev/faults", { kind: "redelivery", count: 1 }),
      await admin("GET", "/dev/faults"),
      await call("POST", "/internal/dev/faults", { body: { kind: "redelivery", count: 1 } }),
    ]) {
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("not_found");
    }
  });

  it("with FAULTS on, takes the admin token and a known kind", async () => {
    expect((await withFaults("GET", "/internal/dev/faults", undefined, null)).status).toBe(401);
    expect((await withFaults("POST", "/internal/dev/faults", { kind: "meteor", count: 1 })).status).toBe(422);
    expect((await withFaults("POST", "/internal/dev/faults", { kind: "redelivery", count: 0 })).status).toBe(422);
    const counts = await json(await withFaults("GET", "/internal/dev/faults"));
    expect(Object.keys(counts.faults)).toEqual(["store-abort", "redelivery", "d1-write"]);
  });

  it("an armed redelivery fails the usage consumer after the store applied the parts; delivered again, they count once", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const { deliver } = holdUsageMessages();
    // The fault's own log lines (`fault_injected`, `usage_failed`).
    vi.spyOn(console, "log").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const records = Array.from({ length: 3 }, () => usageRecord(username(subuser.name)));
    expect((await reportUsage(records)).status).toBe(202);
    const before = (await json(await withFaults("GET", "/internal/dev/faults"))).faults.redelivery.fired;

    const armed = await withFaults("POST", "/internal/dev/faults", { kind: "redelivery", count: 1 });
    expect((await json(armed)).faults.redelivery.armed).toBe(1);
    const first = await deliver();
    expect(first.retryMessages.length).toBeGreaterThan(0);
    expect((await json(await withFaults("GET", "/internal/dev/faults"))).faults.redelivery).toEqual({
      armed: 0,
      fired: before + 1,
    });
    const window = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    // Applied before the fault: the store has the parts already.
    expect((await traffic(account, "residential", window)).rows[0].requests).toBe(3);

    const second = await deliver();
    expect(second.retryMessages).toEqual([]);
    const counted = await eventually(
      () => traffic(account, "residential", window),
      (answer) => answer.rows[0].requests === 3,
    );
    expect(counted.rows[0]).toMatchObject({ requests: 3, bytes_in: 3000, bytes_out: 300 });
  });
});

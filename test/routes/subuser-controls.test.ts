import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, gateway, json } from "../helpers/http";
import { sandboxOf } from "../helpers/sandbox";
import { authorize, createSubuser, username } from "../helpers/subusers";

// In the future of the real clock: alarms the gate sets on this clock wait (one set in the past would ring at once).
const T0 = Date.UTC(2027, 2, 10, 12, 0, 0);
const NODE = "controls-node";

function patch(account: TestAccount, id: string, body: Record<string, unknown>) {
  return call("PATCH", `/v1/subusers/${id}`, { token: account.token, body });
}

async function snapshotOf(name: string): Promise<Record<string, any>> {
  const answer = await json(await gateway("/subusers", { node: NODE, names: [name] }));
  return answer.subusers[0];
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
});
afterEach(() => vi.useRealTimers());

describe("target rules on a sub-user", () => {
  it("are stored canonical (lower case, no trailing dot, ranges without duplicates) and shown as sent", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const response = await patch(account, subuser.id, {
      target_rules: {
        mode: "deny",
        domains: ["Example.COM.", "example.com", "xn--bcher-kva.example"],
        ip_ranges: ["2001:0DB8::/32", "203.0.113.0/24"],
      },
    });
    expect(response.status).toBe(200);
    expect((await json(response)).target_rules).toEqual({
      mode: "deny",
      domains: ["example.com", "xn--bcher-kva.example"],
      ip_ranges: ["2001:db8::/32", "203.0.113.0/24"],
    });
    const removed = await json(await patch(account, subuser.id, { target_rules: null }));
    expect(removed.target_rules).toBeNull();
  });

  it.each([
    [{ mode: "deny", domains: ["not a domain"], ip_ranges: [] }, "target_rules.domains.0"],
    [{ mode: "deny", domains: [], ip_ranges: ["203.0.113.7/24"] }, "target_rules.ip_ranges.0"],
    [{ mode: "block", domains: [], ip_ranges: [] }, "target_rules.mode"],
    [{ mode: "deny", domains: Array.from({ length: 201 }, (_, i) => `d${i}.example`), ip_ranges: [] }, "domains"],
    [{ mode: "deny", domains: [] }, "ip_ranges"],
  ])("bad rules are a 422 naming the field (%#)", async (rules, field) => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const response = await patch(account, subuser.id, { target_rules: rules });
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body.code).toBe("invalid_request");
    expect(JSON.stringify(body.details)).toContain(field.split(".").at(-1));
  });

  it("travel in the node's snapshot and in authorize's allow, so the gateway checks each target itself", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const rules = { mode: "allow", domains: ["shop.example"], ip_ranges: ["203.0.113.0/24"] };
    const subuser = await createSubuser(account, { target_rules: rules } as never);
    expect((await snapshotOf(subuser.name)).target_rules).toEqual(rules);
    const decision = await authorize({ username: username(subuser.name), password: subuser.password });
    expect(decision).toMatchObject({ allow: true, target_rules: rules });
  });

  it("the sandbox's credential test refuses a denied target 403 target-denied and reaches an allowed one", async () => {
    const sandbox = await sandboxOf(await createAccount());
    const order = await call("POST", "/v1/orders", { token: sandbox.token, body: { product: "residential", gb: 1 } });
    expect(order.status).toBe(201);
    const subuser = await createSubuser(sandbox, {
      target_rules: { mode: "deny", domains: ["blocked.example"], ip_ranges: [] },
    } as never);
    const test = async (target: string) =>
      json(
        await call("POST", "/v1/tools/proxy-test", {
          token: sandbox.token,
          body: { username: username(subuser.name), password: subuser.password, target },
        }),
      );
    expect(await test("http://www.blocked.example/")).toMatchObject({ status: 403, error_code: "target-denied" });
    expect(await test("http://open.example/")).toMatchObject({ status: 200, error_code: null });
  });
});

describe("expires_at on a sub-user", () => {
  it("must lie ahead (422 otherwise); null removes it", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const past = await patch(account, subuser.id, { expires_at: new Date(T0 - 1000).toISOString() });
    expect(past.status).toBe(422);
    expect((await json(past)).details).toEqual([expect.objectContaining({ field: "expires_at" })]);
    const set = await json(await patch(account, subuser.id, { expires_at: new Date(T0 + 60_000).toISOString() }));
    expect(set.expires_at).toBe(new Date(T0 + 60_000).toISOString());
    expect((await json(await patch(account, subuser.id, { expires_at: null }))).expires_at).toBeNull();
  });

  it("from expires_at every request is refused 403 subuser-expired; extending it brings the sub-user back", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const expiresAt = T0 + 60_000;
    const subuser = await createSubuser(account, { expires_at: new Date(expiresAt).toISOString() } as never);
    const ask = () => authorize({ username: username(subuser.name), password: subuser.password });
    expect(await ask()).toMatchObject({ allow: true });
    expect((await snapshotOf(subuser.name)).expires_at).toBe(new Date(expiresAt).toISOString());

    vi.setSystemTime(expiresAt);
    expect(await ask()).toMatchObject({ allow: false, status: 403, error_code: "subuser-expired" });

    const extended = await patch(account, subuser.id, { expires_at: new Date(expiresAt + 86_400_000).toISOString() });
    expect(extended.status).toBe(200);
    expect(await ask()).toMatchObject({ allow: true });
    expect((await snapshotOf(subuser.name)).expires_at).toBe(new Date(expiresAt + 86_400_000).toISOString());
  });

  it("raises subuser.expired once per expiry, and again after an extension lapses", async () => {
    const account = await createAccount();
    const expiresAt = T0 + 60_000;
    const subuser = await createSubuser(account, { expires_at: new Date(expiresAt).toISOString() } as never);
    const expiredEvents = async () =>
      (await json(await call("GET", "/v1/events?type=subuser.expired", { token: account.token }))).data;

    await runCron(expiresAt - 1000);
    expect(await expiredEvents()).toHaveLength(0);
    vi.setSystemTime(expiresAt + 1000);
    await runCron(expiresAt + 1000);
    await runCron(expiresAt + 61_000);
    const events = await expiredEvents();
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual({
      subuser: subuser.id,
      label: subuser.label,
      expires_at: new Date(expiresAt).toISOString(),
    });

    const later = expiresAt + 3_600_000;
    expect((await patch(account, subuser.id, { expires_at: new Date(later).toISOString() })).status).toBe(200);
    vi.setSystemTime(later);
    await runCron(later);
    expect(await expiredEvents()).toHaveLength(2);
    // Four runs of every minute's jobs: more than the default 5 s on a busy machine.
  }, 30_000);
});

describe("a key bound to sub-users and the controls", () => {
  it("may edit its sub-users' target rules, never their caps or expiry (403 subuser_binding)", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    const created = await call("POST", "/v1/api-keys", { token: account.token, body: { subuser_ids: [subuser.id] } });
    expect(created.status).toBe(201);
    const bound = { ...account, token: (await json(created)).token };
    const rules = { mode: "allow", domains: ["shop.example"], ip_ranges: [] };
    const edited = await patch(bound, subuser.id, { target_rules: rules });
    expect(edited.status).toBe(200);
    expect((await json(edited)).target_rules).toEqual(rules);
    for (const body of [
      { daily_limit_gb: 1 },
      { lifetime_limit_gb: 1 },
      { expires_at: new Date(T0 + 86_400_000).toISOString() },
      { target_rules: null, traffic_limit_gb: 1 },
    ]) {
      const refused = await patch(bound, subuser.id, body);
      expect(refused.status, JSON.stringify(body)).toBe(403);
      expect((await json(refused)).code).toBe("subuser_binding");
    }
  });
});

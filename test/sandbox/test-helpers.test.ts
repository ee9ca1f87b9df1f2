import { describe, expect, it } from "vitest";
import { SANDBOX_EXITS } from "../../src/domain/sandbox/traffic";
import { sessionIdAt, sessionKey, stickyExit } from "../../src/platform/sticky-sessions";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, json } from "../helpers/http";
import { sandboxOf } from "../helpers/sandbox";
import { createSubuser } from "../helpers/subusers";
import { eventually, traffic } from "../helpers/usage";

const get = async (account: TestAccount, path: string) =>
  json(await call("GET", `/v1${path}`, { token: account.token }));
const post = (account: TestAccount, path: string, body?: unknown) =>
  call("POST", `/v1${path}`, { token: account.token, body });

async function sandboxWithBandwidth(gb = 1): Promise<TestAccount> {
  const sandbox = await sandboxOf(await createAccount());
  for (const product of ["residential", "mobile"]) {
    expect((await post(sandbox, "/orders", { product, gb })).status).toBe(201);
  }
  return sandbox;
}

async function balance(account: TestAccount): Promise<number> {
  return (await get(account, "/users/me")).balance.amount;
}

describe("test helpers are for sandbox keys only", () => {
  it("a live key gets 403 sandbox_key_required from every helper, before anything is looked up", async () => {
    const live = await createAccount();
    const calls: Array<[string, unknown]> = [
      ["/test-helpers/traffic", { subuser: "sub_00000000000000000000000000", requests: 1 }],
      ["/test-helpers/sessions", { subuser: "sub_00000000000000000000000000", session_id: "a", sesstime: 5 }],
      ["/test-helpers/isp/batches/bat_00000000000000000000000000/expire", undefined],
      ["/test-helpers/subscriptions/sbn_00000000000000000000000000/renew", undefined],
      ["/test-helpers/balance/top-up", { amount_usd: 10 }],
    ];
    for (const [path, body] of calls) {
      const response = await post(live, path, body);
      expect(response.status, path).toBe(403);
      expect((await json(response)).code, path).toBe("sandbox_key_required");
      const invalid = await post(live, path, { surprise: true });
      expect((await json(invalid)).code, `${path} with a bad body`).toBe("sandbox_key_required");
    }
    expect(await balance(live)).toBe(0);
  });
});

describe("simulated money", () => {
  it("the sandbox opens with $1,000, pays orders from it and is topped up by the helper", async () => {
    const sandbox = await sandboxOf(await createAccount({ balance_usd: 3 }));
    expect(await balance(sandbox)).toBe(1000);
    const topped = await post(sandbox, "/test-helpers/balance/top-up", { amount_usd: 250.5 });
    expect(topped.status).toBe(200);
    expect(await json(topped)).toMatchObject({ livemode: false, balance: { currency: "USD", amount: 1250.5 } });
    const order = await json(await post(sandbox, "/orders", { product: "residential", gb: 2 }));
    expect(await balance(sandbox)).toBe(1250.5 - order.total_usd);
    const tooMuch = await post(sandbox, "/test-helpers/balance/top-up", { amount_usd: 100_000.01 });
    expect(tooMuch.status).toBe(422);
  });
});

describe("POST /test-helpers/traffic", () => {
  it("goes through the real ingestion: traffic by region, errors at the rate, the request log and the pool", async () => {
    const sandbox = await sandboxWithBandwidth(1);
    const subuser = await createSubuser(sandbox);
    const to = new Date(Date.now() - 60_000);
    const from = new Date(to.getTime() - 10 * 60_000);
    const response = await post(sandbox, "/test-helpers/traffic", {
      subuser: subuser.id,
      requests: 100,
      from: from.toISOString(),
      to: to.toISOString(),
      regions: ["US", "de"],
      tags: ["checkout"],
      error_rate: 0.1,
      bytes_per_request: 10_000,
    });
    expect(response.status).toBe(202);
    expect(await json(response)).toMatchObject({
      subuser: subuser.id,
      product: "residential",
      requests: 100,
      accepted: 100,
      errors: 10,
      bytes: 1_000_000,
      livemode: false,
    });
    const window = `from=${from.toISOString()}&to=${new Date().toISOString()}`;
    const byRegion = await eventually(
      () => traffic(sandbox, "residential", `${window}&group_by=region`),
      (body) => body.rows.reduce((sum: number, row: any) => sum + row.requests, 0) === 100,
    );
    const rows = Object.fromEntries(byRegion.rows.map((row: any) => [row.region, row]));
    expect(rows.us.requests).toBe(50);
    expect(rows.de.requests).toBe(50);
    expect([rows.us.errors, rows.de.errors]).toEqual([5, 5]);
    expect(rows.us.bytes_in + rows.us.bytes_out).toBe(500_000);
    const byTag = await traffic(sandbox, "residential", `${window}&group_by=tag`);
    expect(byTag.rows.map((row: any) => row.tag)).toEqual(["checkout"]);
    // Target hosts cycle over two registrable domains.
    const byDomain = await traffic(sandbox, "residential", `${window}&group_by=domain`);
    expect(byDomain.rows.map((row: any) => [row.domain, row.requests])).toEqual([
      ["sandbox.example", 67],
      ["sandbox-shop.example", 33],
    ]);
    const log = await get(sandbox, `/residential/requests?subuser=${subuser.id}`);
    expect(log.data.length).toBeGreaterThan(0);
    expect(log.data[0]).toMatchObject({ subuser: subuser.id, target_host: "sandbox.example", tag: "checkout" });
    expect(log.data[0].exit_ip).toMatch(/^203\.0\.113\./);
    const pool = await eventually(
      () => get(sandbox, "/residential/balance"),
      (body) => body.gb_used > 0,
    );
    expect(pool.gb_used).toBe(0.001);
  });

  it("bounds its inputs (1-10,000 requests, a past range, known regions) and 404s sub-users of other accounts", async () => {
    const live = await createAccount();
    const sandbox = await sandboxOf(live);
    const subuser = await createSubuser(sandbox);
    const liveSubuser = await createSubuser(live);
    const bad = [
      { subuser: subuser.id, requests: 0 },
      { subuser: subuser.id, requests: 10_001 },
      { subuser: subuser.id, requests: 1, to: new Date(Date.now() + 3_600_000).toISOString() },
      { subuser: subuser.id, requests: 1, from: "2026-11-02", to: "2026-11-01" },
      { subuser: subuser.id, requests: 1, from: new Date(Date.now() - 91 * 86_400_000).toISOString() },
      { subuser: subuser.id, requests: 1, error_rate: 1.5 },
      { subuser: subuser.id, requests: 1, regions: ["usa"] },
      { subuser: subuser.id, requests: 1, product: "mobile" },
      { subuser: subuser.id, requests: 1, surprise: true },
    ];
    for (const body of bad)
      expect((await post(sandbox, "/test-helpers/traffic", body)).status, JSON.stringify(body)).toBe(422);
    const foreign = await post(sandbox, "/test-helpers/traffic", { subuser: liveSubuser.id, requests: 1 });
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).code).toBe("subuser_not_found");
  });
});

describe("POST /test-helpers/sessions", () => {
  it("starts a sticky session through the sub-user's gate, pins a simulated exit and shows it in the sessions API", async () => {
    const sandbox = await sandboxWithBandwidth(1);
    const subuser = await createSubuser(sandbox);
    const body = { subuser: subuser.id, region: "de", session_id: "cart42", sesstime: 10 };
    const response = await post(sandbox, "/test-helpers/sessions", body);
    expect(response.status).toBe(201);
    const started = await json(response);
    expect(started).toMatchObject({ subuser: subuser.id, livemode: false });
    expect(started.id).toMatch(/^ses_/);
    expect(started.username).toBe(`user_${subuser.name}-type-res-region-de-session-cart42-sesstime-10`);
    expect(started.exit_ip).toMatch(/^203\.0\.113\./);
    expect(Date.parse(started.expires_at) - Date.parse(started.started_at)).toBe(10 * 60_000);
    const session = await eventually(
      () => get(sandbox, `/residential/sessions/${started.id}`),
      (found) => found.requests === 1,
    );
    expect(session).toMatchObject({ id: started.id, session_id: "cart42", region: "de", exit_ip: started.exit_ip });
    const listed = await eventually(
      () => get(sandbox, `/residential/sessions?subuser=${subuser.id}`),
      (list) => list.data.length === 1,
    );
    expect(listed.data[0].id).toBe(started.id);
    const again = await json(await post(sandbox, "/test-helpers/sessions", body));
    expect(again).toMatchObject({ id: started.id, exit_ip: started.exit_ip });
  });

  it("follows a gateway node's rules: the id names the key, its generation and the start, the exit is the key's; a second call at once returns the same session; after DELETE the next call starts a new one", async () => {
    const sandbox = await sandboxWithBandwidth(1);
    const subuser = await createSubuser(sandbox, { products: ["residential", "mobile"] });
    const body = { subuser: subuser.id, product: "mobile", session_id: "node7", sesstime: 45, requests: 0 };
    const started = await json(await post(sandbox, "/test-helpers/sessions", body));
    const key = sessionKey(started.username);
    expect(started.id).toBe(sessionIdAt(key, 0, Date.parse(started.started_at)));
    expect(started.exit_ip).toBe(stickyExit(SANDBOX_EXITS, key, 0));
    // Listed at once (no usage yet), so the same username's next call finds it.
    const again = await json(await post(sandbox, "/test-helpers/sessions", { ...body, requests: 2 }));
    expect(again).toEqual(started);
    expect(await get(sandbox, `/mobile/sessions/${started.id}`)).toMatchObject({
      status: "active",
      session_id: "node7",
    });

    const ended = await call("DELETE", `/v1/mobile/sessions/${started.id}`, { token: sandbox.token });
    expect(ended.status).toBe(200);
    const next = await json(await post(sandbox, "/test-helpers/sessions", body));
    expect(next.id).not.toBe(started.id);
    expect(next.username).toBe(started.username);
    // A terminated session's username gets a new exit: its key's next generation.
    expect(next.exit_ip).toBe(stickyExit(SANDBOX_EXITS, key, 1));
    expect(next.exit_ip).not.toBe(started.exit_ip);
    expect(await get(sandbox, `/mobile/sessions/${started.id}`)).toMatchObject({ status: "terminated" });
  });

  it("answers 409 gateway_refused when the gateway would refuse (no bandwidth bought), 422 on bad segments", async () => {
    const sandbox = await sandboxOf(await createAccount());
    const subuser = await createSubuser(sandbox);
    const refused = await post(sandbox, "/test-helpers/sessions", {
      subuser: subuser.id,
      session_id: "a",
      sesstime: 5,
    });
    expect(refused.status).toBe(409);
    const error = await json(refused);
    expect(error.code).toBe("gateway_refused");
    expect(error.message).toContain("402 bandwidth-exhausted");
    const tooLong = await post(sandbox, "/test-helpers/sessions", {
      subuser: subuser.id,
      session_id: "a",
      sesstime: 45,
    });
    expect(tooLong.status).toBe(422);
    const cityWithoutState = await post(sandbox, "/test-helpers/sessions", {
      subuser: subuser.id,
      session_id: "a",
      sesstime: 5,
      city: "berlin",
    });
    expect(cityWithoutState.status).toBe(422);
  });
});

describe("expire and renew now", () => {
  async function activeBatch(sandbox: TestAccount) {
    const subuser = await createSubuser(sandbox, { products: ["isp"] });
    const order = await json(
      await post(sandbox, "/orders", {
        product: "isp",
        country: "US",
        city: "newyork",
        asn: 7922,
        quantity: 5,
        months: 1,
        subuser: subuser.id,
      }),
    );
    return { batchId: order.details.batch_id as string, total: order.total_usd as number };
  }

  it("expiring an auto-renewing batch renews and charges it now; a provisioning one is 409 batch_not_active", async () => {
    const sandbox = await sandboxOf(await createAccount());
    const { batchId, total } = await activeBatch(sandbox);
    const early = await post(sandbox, `/test-helpers/isp/batches/${batchId}/expire`);
    expect(early.status).toBe(409);
    expect((await json(early)).code).toBe("batch_not_active");
    await runCron(Date.now() + 6_000);
    const before = await get(sandbox, `/isp/batches/${batchId}`);
    const paid = await balance(sandbox);
    const response = await post(sandbox, `/test-helpers/isp/batches/${batchId}/expire`);
    expect(response.status).toBe(200);
    const after = await json(response);
    expect(after).toMatchObject({ id: batchId, status: "active", livemode: false });
    expect(Date.parse(after.period_start)).toBeGreaterThan(Date.parse(before.period_start));
    expect(Date.parse(after.expires_at)).toBeGreaterThan(Date.now() + 27 * 24 * 3_600_000);
    expect(await balance(sandbox)).toBe(Math.round((paid - total) * 100) / 100);
  });

  it("a batch that no longer auto-renews expires into grace, and expiring it again releases it now", async () => {
    const sandbox = await sandboxOf(await createAccount());
    const { batchId } = await activeBatch(sandbox);
    await runCron(Date.now() + 6_000);
    const subscription = await json(
      await post(sandbox, "/subscriptions", { product: "isp", batch_id: batchId, cycle: "monthly" }),
    );
    expect((await post(sandbox, `/subscriptions/${subscription.id}/pause`)).status).toBe(200);
    const paid = await balance(sandbox);
    const grace = await json(await post(sandbox, `/test-helpers/isp/batches/${batchId}/expire`));
    expect(grace).toMatchObject({ id: batchId, status: "grace", auto_renew: false });
    expect(Date.parse(grace.grace_until) - Date.parse(grace.expires_at)).toBe(7 * 24 * 3_600_000);
    expect(await balance(sandbox)).toBe(paid);
    const released = await json(await post(sandbox, `/test-helpers/isp/batches/${batchId}/expire`));
    expect(released).toMatchObject({ id: batchId, status: "released" });
    const again = await post(sandbox, `/test-helpers/isp/batches/${batchId}/expire`);
    expect(again.status).toBe(409);
  });

  it("renewing a bandwidth subscription now charges the period and adds its GB to the pool", async () => {
    const sandbox = await sandboxOf(await createAccount());
    const subscription = await json(
      await post(sandbox, "/subscriptions", { product: "residential", plan: "starter", cycle: "monthly" }),
    );
    const pool = await get(sandbox, "/residential/balance");
    const paid = await balance(sandbox);
    const response = await post(sandbox, `/test-helpers/subscriptions/${subscription.id}/renew`);
    expect(response.status).toBe(200);
    const renewed = await json(response);
    expect(renewed).toMatchObject({ id: subscription.id, status: "active", livemode: false });
    expect(Date.parse(renewed.period_start)).toBeGreaterThan(Date.parse(subscription.period_start));
    expect(Date.parse(renewed.renews_at)).toBeGreaterThan(Date.parse(subscription.renews_at));
    expect(await balance(sandbox)).toBe(Math.round((paid - subscription.price_usd) * 100) / 100);
    expect((await get(sandbox, "/residential/balance")).gb_purchased).toBe(pool.gb_purchased + 50);
    const other = await sandboxOf(await createAccount());
    expect((await post(other, `/test-helpers/subscriptions/${subscription.id}/renew`)).status).toBe(404);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, env, json } from "../helpers/http";
import { getBatch, orderBatch } from "../helpers/isp";

const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const MINUTE = 60_000;
const DAY = 86_400_000;

function at(ms: number) {
  vi.setSystemTime(ms);
  return ms;
}

function subscribe(account: TestAccount, body: Record<string, unknown>) {
  return call("POST", "/v1/subscriptions", { token: account.token, body });
}

async function balance(account: TestAccount): Promise<number> {
  return (await json(await call("GET", "/v1/users/me", { token: account.token }))).balance.amount;
}

async function pool(account: TestAccount, product = "residential") {
  return json(await call("GET", `/v1/${product}/balance`, { token: account.token }));
}

describe("bandwidth subscriptions (spec §2.6, §4.5)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(T0);
  });
  afterEach(() => vi.useRealTimers());

  it("subscribing charges the first cycle and adds the tier's GB to the pool", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const response = await subscribe(account, { product: "residential", plan: "pro", cycle: "monthly" });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toMatchObject({
      product: "residential",
      plan: "pro",
      cycle: "monthly",
      gb_included: 500,
      price_usd: 1500,
      status: "active",
      renews_at: new Date(Date.UTC(2026, 1, 1)).toISOString(),
    });
    expect(body.id).toMatch(/^sbn_/);
    expect(await balance(account)).toBe(8500);
    expect((await pool(account)).gb_remaining).toBe(500);
  });

  it("prices annual cycles at 12 × monthly − 10%", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const body = await json(await subscribe(account, { product: "mobile", plan: "starter", cycle: "annual" }));
    expect(body).toMatchObject({ price_usd: 2160, gb_included: 300 });
    expect(body.renews_at).toBe(new Date(Date.UTC(2027, 0, 1)).toISOString());
  });

  it("answers 422 unknown_plan for a tier the product lacks, and for enterprise without a custom price", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    for (const plan of ["gold", "enterprise"]) {
      const response = await subscribe(account, { product: "residential", plan, cycle: "monthly" });
      expect(response.status).toBe(422);
      expect((await json(response)).code).toBe("unknown_plan");
    }
    await admin("PUT", `/accounts/${account.id}/custom-tiers/residential`, {
      gb_included: 10000,
      monthly_price_usd: 2000,
    });
    const enterprise = await subscribe(account, { product: "residential", plan: "enterprise", cycle: "monthly" });
    expect(enterprise.status, await enterprise.clone().text()).toBe(201);
    expect(await json(enterprise)).toMatchObject({ gb_included: 10000, price_usd: 2000 });
  });

  it("answers 409 already_subscribed for a second live subscription of the same product and plan", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" });
    const again = await subscribe(account, { product: "residential", plan: "starter", cycle: "annual" });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("already_subscribed");
    expect((await subscribe(account, { product: "mobile", plan: "starter", cycle: "monthly" })).status).toBe(201);
    const concurrent = await Promise.all([
      subscribe(account, { product: "residential", plan: "pro", cycle: "monthly" }),
      subscribe(account, { product: "residential", plan: "pro", cycle: "monthly" }),
    ]);
    expect(concurrent.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it("answers 409 insufficient_balance and writes nothing when the first cycle cannot be paid", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const response = await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" });
    expect((await json(response)).code).toBe("insufficient_balance");
    expect((await json(await call("GET", "/v1/subscriptions", { token: account.token }))).data).toEqual([]);
  });

  it("upgrades are prorated for the rest of the period and charged now", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const sub = await json(await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" }));
    at(T0 + 15.5 * DAY); // half of January's 31 days remain
    const upgraded = await json(
      await call("PATCH", `/v1/subscriptions/${sub.id}`, { token: account.token, body: { plan: "pro" } }),
    );
    expect(upgraded).toMatchObject({ plan: "pro", price_usd: 1500, gb_included: 500 });
    expect(await balance(account)).toBe(10000 - 200 - 650); // (1500 − 200) × 1/2
    expect((await pool(account)).gb_purchased).toBe(50 + 225); // + (500 − 50) × 1/2
  });

  it("downgrades take effect at the next renewal, and never below this period's usage", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const sub = await json(await subscribe(account, { product: "residential", plan: "pro", cycle: "monthly" }));
    await env.DB.prepare("UPDATE bandwidth_pools SET used_bytes = 60000000000 WHERE account_id = ?")
      .bind(account.id)
      .run();
    const below = await call("PATCH", `/v1/subscriptions/${sub.id}`, {
      token: account.token,
      body: { plan: "starter" },
    });
    expect(below.status).toBe(409);
    expect((await json(below)).code).toBe("downgrade_below_usage");
    await env.DB.prepare("UPDATE bandwidth_pools SET used_bytes = 40000000000 WHERE account_id = ?")
      .bind(account.id)
      .run();
    const pending = await json(
      await call("PATCH", `/v1/subscriptions/${sub.id}`, {
        token: account.token,
        body: { plan: "starter", cycle: "annual" },
      }),
    );
    expect(pending).toMatchObject({ plan: "pro", price_usd: 1500, pending: { plan: "starter", cycle: "annual" } });
    expect(await balance(account)).toBe(8500);

    await runCron(at(Date.UTC(2026, 1, 1) + MINUTE));
    const renewed = await json(await call("GET", `/v1/subscriptions/${sub.id}`, { token: account.token }));
    expect(renewed).toMatchObject({
      plan: "starter",
      cycle: "annual",
      price_usd: 2160,
      gb_included: 600,
      pending: { plan: null, cycle: null },
    });
    expect(renewed.renews_at).toBe(new Date(Date.UTC(2027, 1, 1)).toISOString());
    expect(await balance(account)).toBe(8500 - 2160);
  });

  it("renews once per period whatever the cron runs, adding the period's GB", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" });
    const time = at(Date.UTC(2026, 1, 1) + MINUTE);
    await Promise.all([runCron(time), runCron(time)]);
    await runCron(at(time + MINUTE));
    expect(await balance(account)).toBe(10000 - 400);
    expect((await pool(account)).gb_purchased).toBe(100);
  });

  it("an unpaid renewal makes the subscription past_due, retried until paid, cancelled after 7 days", async () => {
    const account = await createAccount({ balance_usd: 250 });
    const sub = await json(await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" }));
    const due = Date.UTC(2026, 1, 1);
    await runCron(at(due + MINUTE));
    expect((await json(await call("GET", `/v1/subscriptions/${sub.id}`, { token: account.token }))).status).toBe(
      "past_due",
    );
    await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 200 });
    await runCron(at(due + DAY));
    const paid = await json(await call("GET", `/v1/subscriptions/${sub.id}`, { token: account.token }));
    expect(paid).toMatchObject({ status: "active", renews_at: new Date(Date.UTC(2026, 2, 1)).toISOString() });

    await runCron(at(Date.UTC(2026, 2, 1) + MINUTE));
    expect((await json(await call("GET", `/v1/subscriptions/${sub.id}`, { token: account.token }))).status).toBe(
      "past_due",
    );
    await runCron(at(Date.UTC(2026, 2, 8) + 2 * MINUTE));
    const gone = await json(await call("GET", `/v1/subscriptions/${sub.id}`, { token: account.token }));
    expect(gone.status).toBe("cancelled");
    expect(gone.archived_at).not.toBeNull();
  });

  it("pause stops renewal and keeps the period; cancel ends it at period end and archives it", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const paused = await json(await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" }));
    const cancelled = await json(await subscribe(account, { product: "mobile", plan: "starter", cycle: "monthly" }));
    expect(
      (await json(await call("POST", `/v1/subscriptions/${paused.id}/pause`, { token: account.token }))).status,
    ).toBe("paused");
    const cancelling = await json(
      await call("POST", `/v1/subscriptions/${cancelled.id}/cancel`, { token: account.token }),
    );
    expect(cancelling.status).toBe("cancelling");
    expect(cancelling.archived_at).toBeNull();
    const pauseAgain = await call("POST", `/v1/subscriptions/${paused.id}/pause`, { token: account.token });
    expect((await json(pauseAgain)).code).toBe("subscription_not_active");

    await runCron(at(Date.UTC(2026, 1, 1) + MINUTE));
    expect(await balance(account)).toBe(10000 - 400);
    expect((await json(await call("GET", `/v1/subscriptions/${paused.id}`, { token: account.token }))).status).toBe(
      "paused",
    );
    const archived = await json(await call("GET", `/v1/subscriptions/${cancelled.id}`, { token: account.token }));
    expect(archived.status).toBe("cancelled");
    expect(archived.archived_at).not.toBeNull();
    // Archived: the product and plan are free again.
    expect((await subscribe(account, { product: "mobile", plan: "starter", cycle: "monthly" })).status).toBe(201);
  });

  it("lists subscriptions; another account's subscription is 404 not_found", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const sub = await json(await subscribe(account, { product: "residential", plan: "starter", cycle: "monthly" }));
    const list = await json(await call("GET", "/v1/subscriptions", { token: account.token }));
    expect(list.data.map((s: { id: string }) => s.id)).toEqual([sub.id]);
    expect(list.next_cursor).toBeNull();
    const stranger = await createAccount();
    const foreign = await call("GET", `/v1/subscriptions/${sub.id}`, { token: stranger.token });
    expect(foreign.status).toBe(404);
    expect(
      (await call("PATCH", `/v1/subscriptions/${sub.id}`, { token: stranger.token, body: { plan: "pro" } })).status,
    ).toBe(404);
  });
});

describe("ISP subscriptions", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(T0);
  });
  afterEach(() => vi.useRealTimers());

  it("turns auto-renew on for a batch with the batch's period; a second one is already_subscribed", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const { batchId } = await orderBatch(account, { quantity: 10 }, T0 + 3 * MINUTE);
    const response = await subscribe(account, { product: "isp", batch_id: batchId, cycle: "monthly" });
    expect(response.status).toBe(201);
    const sub = await json(response);
    const batch = await getBatch(account, batchId);
    expect(sub).toMatchObject({
      product: "isp",
      batch_id: batchId,
      quantity: 10,
      price_usd: 60,
      renews_at: batch.expires_at,
    });
    expect(batch.auto_renew).toBe(true);
    expect(await balance(account)).toBe(10000 - 60);
    const again = await subscribe(account, { product: "isp", batch_id: batchId, cycle: "annual" });
    expect((await json(again)).code).toBe("already_subscribed");
    const unknown = await subscribe(account, {
      product: "isp",
      batch_id: "bat_01JD2W6Q6J5E4V3N0Z9Y8X7W6V",
      cycle: "monthly",
    });
    expect(unknown.status).toBe(404);
  });

  it("a quantity increase provisions the extra IPs now, prorated; a decrease applies at renewal", async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const { batchId } = await orderBatch(account, { quantity: 10 }, T0 + 3 * MINUTE);
    const sub = await json(await subscribe(account, { product: "isp", batch_id: batchId, cycle: "monthly" }));
    const expiresAt = Date.parse((await getBatch(account, batchId)).expires_at);
    at(expiresAt - 15 * DAY); // 15 of 30 days left
    const grown = await json(
      await call("PATCH", `/v1/subscriptions/${sub.id}`, { token: account.token, body: { quantity: 14 } }),
    );
    expect(grown).toMatchObject({ quantity: 14, price_usd: 84 });
    expect((await getBatch(account, batchId)).quantity).toBe(14);
    const ips = await json(await call("GET", `/v1/isp/batches/${batchId}/ips`, { token: account.token }));
    expect(ips).toHaveLength(14);
    expect(await balance(account)).toBe(10000 - 60 - 12); // 4 IPs × 6.00 × 15/30

    const shrinking = await json(
      await call("PATCH", `/v1/subscriptions/${sub.id}`, { token: account.token, body: { quantity: 6 } }),
    );
    expect(shrinking).toMatchObject({ quantity: 14, pending: { quantity: 6 } });
    const tooFew = await call("PATCH", `/v1/subscriptions/${sub.id}`, { token: account.token, body: { quantity: 4 } });
    expect((await json(tooFew)).code).toBe("quantity_out_of_range");
    const noPlan = await call("PATCH", `/v1/subscriptions/${sub.id}`, { token: account.token, body: { plan: "pro" } });
    expect(noPlan.status).toBe(422);

    await runCron(at(expiresAt + MINUTE));
    const renewed = await getBatch(account, batchId);
    expect(renewed).toMatchObject({ status: "active", quantity: 6 });
    expect(await json(await call("GET", `/v1/isp/batches/${batchId}/ips`, { token: account.token }))).toHaveLength(6);
    expect(await balance(account)).toBe(10000 - 60 - 12 - 36);
    expect(
      (await json(await call("GET", `/v1/subscriptions/${sub.id}`, { token: account.token }))).pending.quantity,
    ).toBeNull();
  });
});

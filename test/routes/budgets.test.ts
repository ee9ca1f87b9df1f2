import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, env, json } from "../helpers/http";
import { getBatch, orderBatch } from "../helpers/isp";
import { codeAt, enableMfa } from "../helpers/mfa";
import { createSubuser } from "../helpers/subusers";
import { createEndpoint, deliveryWhen, receivedAtLeast } from "../webhooks/helpers";

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const MINUTE = 60_000;

function at(ms: number) {
  vi.setSystemTime(ms);
  return ms;
}

function putBudget(account: TestAccount, body: unknown) {
  return call("PUT", "/v1/budget", { token: account.token, body });
}

async function budget(account: TestAccount) {
  const response = await call("GET", "/v1/budget", { token: account.token });
  expect(response.status).toBe(200);
  return json(response);
}

/** Residential bandwidth costs 4.50 per GB: 2 GB is 9.00, 12 GB is 54.00. */
function order(account: TestAccount, gb: number, key?: string) {
  return call("POST", "/v1/orders", {
    token: account.token,
    body: { product: "residential", gb },
    headers: key ? { "Idempotency-Key": key } : {},
  });
}

async function thresholdEvents(account: TestAccount) {
  const response = await call("GET", "/v1/events?type=budget.threshold&limit=100", { token: account.token });
  expect(response.status).toBe(200);
  return ((await json(response)).data as Array<{ data: Record<string, any> }>).map((event) => event.data).reverse();
}

/** The account's money as stored: the balance, and the ledger's entry count and sum. */
async function money(account: TestAccount) {
  return env.DB.prepare(
    `SELECT a.balance_minor AS balance, (SELECT COUNT(*) FROM ledger_entries l WHERE l.account_id = a.id) AS entries,
       (SELECT COALESCE(SUM(amount_minor), 0) FROM ledger_entries l WHERE l.account_id = a.id) AS ledger
     FROM accounts a WHERE a.id = ?`,
  )
    .bind(account.id)
    .first<{ balance: number; entries: number; ledger: number }>();
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  at(T0);
});
afterEach(() => vi.useRealTimers());

describe("spend budgets: GET/PUT/DELETE /v1/budget", () => {
  it("without a budget the month's spend still shows; PUT sets it with default thresholds; DELETE removes it", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await order(account, 2);
    expect(await budget(account)).toEqual({
      currency: "USD",
      amount_usd: null,
      thresholds_percent: [],
      hard_stop: false,
      month: "2026-01",
      spent_this_month_usd: 9,
      remaining_usd: null,
      thresholds_reached: [],
      updated_at: null,
      livemode: true,
    });
    const set = await putBudget(account, { amount_usd: 15 });
    expect(set.status).toBe(200);
    expect(await json(set)).toMatchObject({
      amount_usd: 15,
      thresholds_percent: [50, 80, 100],
      hard_stop: false,
      spent_this_month_usd: 9,
      remaining_usd: 6,
      thresholds_reached: [50],
      updated_at: new Date(T0).toISOString(),
    });
    const removed = await call("DELETE", "/v1/budget", { token: account.token });
    expect(removed.status).toBe(200);
    expect(await json(removed)).toMatchObject({ amount_usd: null, hard_stop: false, spent_this_month_usd: 9 });
    expect((await budget(account)).amount_usd).toBeNull();
  });

  it("refuses invalid budgets with 422 invalid_request naming the field", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const bad: Array<[unknown, string]> = [
      [{ amount_usd: 0 }, "amount_usd"],
      [{ amount_usd: -5 }, "amount_usd"],
      [{ amount_usd: 1.005 }, "amount_usd"],
      [{ amount_usd: 10_000_001 }, "amount_usd"],
      [{ amount_usd: "100" }, "amount_usd"],
      [{}, "amount_usd"],
      [{ amount_usd: 100, thresholds_percent: [0] }, "thresholds_percent.0"],
      [{ amount_usd: 100, thresholds_percent: [50, 1001] }, "thresholds_percent.1"],
      [{ amount_usd: 100, thresholds_percent: [50.5] }, "thresholds_percent.0"],
      [{ amount_usd: 100, thresholds_percent: [80, 80] }, "thresholds_percent"],
      [{ amount_usd: 100, thresholds_percent: Array.from({ length: 11 }, (_, i) => i + 1) }, "thresholds_percent"],
      [{ amount_usd: 100, hard_stop: "yes" }, "hard_stop"],
      [{ amount_usd: 100, currency: "EUR" }, "currency"],
    ];
    for (const [body, field] of bad) {
      const response = await putBudget(account, body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      const error = await json(response);
      expect(error.code).toBe("invalid_request");
      expect(error.details.map((detail: { field: string }) => detail.field)).toContain(field);
    }
    expect((await budget(account)).amount_usd).toBeNull();
  });

  it("is account-wide: a product-scoped key gets 403 subuser_scope_mismatch, a read-only key cannot change it", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const scoped = await issueKey(account.id, ["residential"]);
    for (const method of ["GET", "PUT", "DELETE"]) {
      const response = await call(method, "/v1/budget", {
        token: scoped.token,
        body: method === "PUT" ? { amount_usd: 5 } : undefined,
      });
      expect(response.status).toBe(403);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    }
    const created = await call("POST", "/v1/api-keys", {
      token: account.token,
      body: { name: "reader", scopes: { billing: "read" } },
    });
    const reader = (await json(created)).token as string;
    expect((await call("GET", "/v1/budget", { token: reader })).status).toBe(200);
    const write = await call("PUT", "/v1/budget", { token: reader, body: { amount_usd: 5 } });
    expect(write.status).toBe(403);
    expect((await json(write)).code).toBe("insufficient_scope");
  });

  it("needs X-MFA-Code to set or remove once MFA is enabled: a leaked key cannot lift its own cap", async () => {
    const account = await createAccount({ balance_usd: 10 });
    const { secret } = await enableMfa(account);
    const without = await putBudget(account, { amount_usd: 5 });
    expect(without.status).toBe(403);
    expect((await json(without)).code).toBe("mfa_required");
    at(T0 + MINUTE);
    const withCode = await call("PUT", "/v1/budget", {
      token: account.token,
      body: { amount_usd: 5, hard_stop: true },
      headers: { "X-MFA-Code": codeAt(secret, T0 + MINUTE) },
    });
    expect(withCode.status).toBe(200);
    const removal = await call("DELETE", "/v1/budget", { token: account.token });
    expect(removal.status).toBe(403);
    expect((await budget(account)).hard_stop).toBe(true);
  });

  it("another account's budget and spend are its own", async () => {
    const owner = await createAccount({ balance_usd: 1000 });
    const other = await createAccount({ balance_usd: 1000 });
    await putBudget(owner, { amount_usd: 10, hard_stop: true });
    expect((await order(other, 12)).status).toBe(201);
    expect(await budget(other)).toMatchObject({ amount_usd: null, spent_this_month_usd: 54 });
    expect(await budget(owner)).toMatchObject({ amount_usd: 10, spent_this_month_usd: 0, thresholds_reached: [] });
    expect(await thresholdEvents(other)).toEqual([]);
    expect((await order(owner, 2)).status).toBe(201);
    expect((await budget(other)).spent_this_month_usd).toBe(54);
  });
});

describe("budget.threshold events", () => {
  it("each threshold is reported once a month, by the charge that reaches it, with the spend after it", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 100 });
    expect(await thresholdEvents(account)).toEqual([]);
    await order(account, 12); // 54.00: past 50 %
    expect(await thresholdEvents(account)).toEqual([
      { month: "2026-01", threshold_percent: 50, budget_usd: 100, spent_usd: 54, hard_stop: false },
    ]);
    await order(account, 12); // 108.00: past 80 % and 100 %, no hard stop
    await order(account, 2);
    const events = await thresholdEvents(account);
    expect(events.map((event) => event.threshold_percent)).toEqual([50, 80, 100]);
    expect(events[2]).toMatchObject({ spent_usd: 108 });
    expect(await budget(account)).toMatchObject({
      spent_this_month_usd: 117,
      remaining_usd: 0,
      thresholds_reached: [50, 80, 100],
    });
  });

  it("reaches an endpoint subscribed to budget.threshold right after the order that crossed it", async () => {
    vi.useRealTimers();
    const account = await createAccount({ balance_usd: 1000 });
    const endpoint = await createEndpoint(account, { events: ["budget.threshold"] });
    await putBudget(account, { amount_usd: 10, thresholds_percent: [80] });
    await order(account, 2);
    const delivery = await deliveryWhen(account, endpoint.id, (sent) => sent.status === "succeeded");
    expect(delivery.event_type).toBe("budget.threshold");
    const [body] = await receivedAtLeast(endpoint.url, 1);
    expect(JSON.parse(body?.body ?? "{}").data).toMatchObject({ threshold_percent: 80, budget_usd: 10, spent_usd: 9 });
  });

  it("a new month re-arms the thresholds and starts the spend from zero (UTC calendar months)", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    at(Date.UTC(2026, 0, 31, 23, 59));
    await putBudget(account, { amount_usd: 100, thresholds_percent: [50] });
    await order(account, 12);
    at(Date.UTC(2026, 1, 1, 0, 1));
    expect(await budget(account)).toMatchObject({ month: "2026-02", spent_this_month_usd: 0, thresholds_reached: [] });
    await order(account, 12);
    expect((await thresholdEvents(account)).map((event) => event.month)).toEqual(["2026-01", "2026-02"]);
  });

  it("a new amount re-arms the thresholds, and reports those the spend has already reached at once", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await order(account, 12);
    await putBudget(account, { amount_usd: 200, thresholds_percent: [25, 50] });
    expect((await thresholdEvents(account)).map((event) => event.threshold_percent)).toEqual([25]);
    await putBudget(account, { amount_usd: 200, thresholds_percent: [25, 50], hard_stop: true });
    expect(await thresholdEvents(account)).toHaveLength(1);
    await putBudget(account, { amount_usd: 100, thresholds_percent: [25, 50] });
    expect((await thresholdEvents(account)).map((event) => [event.budget_usd, event.threshold_percent])).toEqual([
      [200, 25],
      [100, 25],
      [100, 50],
    ]);
  });

  it("an idempotent retry of an order counts its spend once", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 100 });
    const first = await order(account, 12, "retry-me");
    const again = await order(account, 12, "retry-me");
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await json(again)).toEqual(await json(first));
    expect((await budget(account)).spent_this_month_usd).toBe(54);
    expect(await thresholdEvents(account)).toHaveLength(1);
  });
});

describe("the budget's hard stop", () => {
  it("refuses an order past the budget with 409 budget_exceeded and its figures, charging nothing", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 10, hard_stop: true });
    expect((await order(account, 2)).status).toBe(201); // 9.00
    const before = await money(account);
    const refused = await order(account, 1); // 4.50 more would be 13.50
    expect(refused.status).toBe(409);
    const error = await json(refused);
    expect(error).toMatchObject({
      code: "budget_exceeded",
      doc_url: expect.stringMatching(/\/docs\/errors#budget_exceeded$/),
      limit: 10,
      current: 9,
      limit_raised_by: "PUT /v1/budget",
    });
    expect(error.message).toContain("10.00 USD");
    expect(error.message).toContain("9.00 USD spent");
    expect(error.message).toContain("4.50 USD");
    expect(await money(account)).toEqual(before);
    const orders = await json(await call("GET", "/v1/orders", { token: account.token }));
    expect(orders.data).toHaveLength(1);
    expect((await json(await call("GET", "/v1/residential/balance", { token: account.token }))).gb_purchased).toBe(2);
    // Up to the budget exactly is allowed; turning the hard stop off lets the order through.
    expect((await order(account, 0.222)).status).toBe(201); // 1.00 (rounded up): 10.00 in all
    await putBudget(account, { amount_usd: 10, hard_stop: false });
    expect((await order(account, 1)).status).toBe(201);
  });

  it("refuses an ISP order past the budget with the order's total", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 20, hard_stop: true });
    const subuser = await createSubuser(account, { products: ["isp"] });
    const refused = await call("POST", "/v1/orders", {
      token: account.token,
      body: { product: "isp", country: "US", asn: 7922, quantity: 5, months: 1, subuser: subuser.id },
    });
    expect(refused.status, await refused.clone().text()).toBe(409);
    const error = await json(refused);
    expect(error.code).toBe("budget_exceeded");
    expect(error.message).toContain("this charge of 30.00 USD");
    expect((await money(account))?.balance).toBe(100_000);
  });

  it("a quote tells the order would pass the budget", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 10, hard_stop: true });
    const quote = await json(
      await call("POST", "/v1/orders/quote", { token: account.token, body: { product: "residential", gb: 12 } }),
    );
    expect(quote).toMatchObject({ orderable: false, error: { status: 409, code: "budget_exceeded" } });
    expect(quote.error.message).toContain("this charge of 54.00 USD");
    const fits = await json(
      await call("POST", "/v1/orders/quote", { token: account.token, body: { product: "residential", gb: 2 } }),
    );
    expect(fits).toMatchObject({ orderable: true, error: null });
  });

  it("refuses an ISP auto-renewal past the budget: the batch enters grace as when unpaid", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { batchId } = await orderBatch(account, { quantity: 5 }, T0 + 2 * 3_600_000);
    await putBudget(account, { amount_usd: 10, hard_stop: true });
    const batch = await getBatch(account, batchId);
    expect(batch).toMatchObject({ status: "active", auto_renew: true });
    const before = await money(account);
    await runCron(at(Date.parse(batch.expires_at) + MINUTE));
    expect((await getBatch(account, batchId)).status).toBe("grace");
    expect(await money(account)).toEqual(before);
  });

  it("two orders at once near the budget never both pass", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 10, hard_stop: true });
    const results = await Promise.all([order(account, 2), order(account, 2), order(account, 2)]);
    const statuses = results.map((response) => response.status).sort();
    expect(statuses).toEqual([201, 409, 409]);
    expect((await budget(account)).spent_this_month_usd).toBe(9);
    expect((await money(account))?.balance).toBe(100_000 - 900);
  });

  it("refuses a renewal past the budget: past_due as when unpaid, renewed once the budget allows", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const subscription = await json(
      await call("POST", "/v1/subscriptions", {
        token: account.token,
        body: { product: "residential", plan: "starter", cycle: "monthly" },
      }),
    );
    expect(subscription.status).toBe("active");
    await putBudget(account, { amount_usd: 100, hard_stop: true });
    const before = await money(account);
    const due = Date.UTC(2026, 1, 10, 12, 0, 0);
    await runCron(at(due + MINUTE));
    const refused = await json(await call("GET", `/v1/subscriptions/${subscription.id}`, { token: account.token }));
    expect(refused.status).toBe("past_due");
    expect(await money(account)).toEqual(before);
    expect((await budget(account)).spent_this_month_usd).toBe(0);

    await putBudget(account, { amount_usd: 500, hard_stop: true });
    await runCron(at(due + 2 * MINUTE));
    const renewed = await json(await call("GET", `/v1/subscriptions/${subscription.id}`, { token: account.token }));
    expect(renewed).toMatchObject({ status: "active", renews_at: new Date(Date.UTC(2026, 2, 10, 12)).toISOString() });
    expect((await budget(account)).spent_this_month_usd).toBe(200);
  });

  it("refuses a new subscription past the budget too", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    await putBudget(account, { amount_usd: 100, hard_stop: true });
    const refused = await call("POST", "/v1/subscriptions", {
      token: account.token,
      body: { product: "residential", plan: "starter", cycle: "monthly" },
    });
    expect(refused.status).toBe(409);
    expect((await json(refused)).code).toBe("budget_exceeded");
    expect((await money(account))?.balance).toBe(100_000);
  });

  it("an operator's credit is never refused by the budget", async () => {
    const account = await createAccount({ balance_usd: 0 });
    await putBudget(account, { amount_usd: 1, hard_stop: true });
    expect((await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 50 })).status).toBe(200);
    expect((await money(account))?.balance).toBe(5000);
  });
});

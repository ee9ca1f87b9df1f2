import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { buyBandwidth, createAccount, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, settleUsage, usageRecord } from "../helpers/usage";

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
/** The starter subscription bought at T0 renews a month later, for 200.00. */
const RENEWAL = Date.UTC(2026, 1, 10, 12, 0, 0);
const DAY = 86_400_000;
const HOUR = 3_600_000;

function at(ms: number) {
  vi.setSystemTime(ms);
  return ms;
}

async function lowEvents(account: TestAccount) {
  const response = await call("GET", "/v1/events?type=balance.low&limit=100", { token: account.token });
  expect(response.status).toBe(200);
  return ((await json(response)).data as Array<{ data: Record<string, any> }>).map((event) => event.data).reverse();
}

async function subscribeStarter(account: TestAccount) {
  const response = await call("POST", "/v1/subscriptions", {
    token: account.token,
    body: { product: "residential", plan: "starter", cycle: "monthly" },
  });
  expect(response.status).toBe(201);
}

/** Residential bandwidth costs 4.50 per GB. */
async function order(account: TestAccount, gb: number) {
  expect(
    (await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb } })).status,
  ).toBe(201);
}

describe("balance.low", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(T0);
  });
  afterEach(() => vi.useRealTimers());

  it("is raised by the charge that takes the balance below the next 7 days' renewals, once per crossing", async () => {
    const account = await createAccount({ balance_usd: 450 });
    await subscribeStarter(account); // 250.00 left; the renewal is a month away
    expect(await lowEvents(account)).toEqual([]);
    at(RENEWAL - 6 * DAY);
    await order(account, 12); // 54.00: 196.00 left, below the 200.00 renewal due in 6 days
    expect(await lowEvents(account)).toEqual([
      { balance_usd: 196, need_usd: 200, renewals_usd: 200, forecast_usd: 0, horizon_days: 7 },
    ]);
    await order(account, 2); // still below: the same crossing
    expect(await lowEvents(account)).toHaveLength(1);

    // A top-up above the need re-arms it; the next fall below is a new event.
    await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 100 }); // 287.00
    await order(account, 12); // 233.00: above
    expect(await lowEvents(account)).toHaveLength(1);
    await order(account, 12); // 179.00: below again
    const events = await lowEvents(account);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ balance_usd: 179, need_usd: 200 });
  });

  it("is raised by the cron when a renewal enters the 7-day horizon with no movement of money, once", async () => {
    const account = await createAccount({ balance_usd: 250 });
    await subscribeStarter(account); // 50.00 left
    await runCron(at(RENEWAL - 10 * DAY));
    expect(await lowEvents(account)).toEqual([]);
    await runCron(at(RENEWAL - 6 * DAY));
    expect(await lowEvents(account)).toEqual([
      { balance_usd: 50, need_usd: 200, renewals_usd: 200, forecast_usd: 0, horizon_days: 7 },
    ]);
    await runCron(at(RENEWAL - 6 * DAY + 2 * HOUR));
    await runCron(at(RENEWAL - 5 * DAY));
    expect(await lowEvents(account)).toHaveLength(1);
  });

  it("needs nothing of an account with nothing to renew, and is its own per account", async () => {
    const quiet = await createAccount({ balance_usd: 10 });
    const low = await createAccount({ balance_usd: 250 });
    await subscribeStarter(low);
    await order(quiet, 0.001);
    at(RENEWAL - 3 * DAY);
    await order(low, 1);
    expect(await lowEvents(low)).toHaveLength(1);
    expect(await lowEvents(quiet)).toEqual([]);
  });
});

describe("balance.low: the usage forecast", () => {
  it("counts what the last 7 days' pace would use beyond the pool in the next 7, at today's price", async () => {
    const account = await createAccount({ balance_usd: 1 });
    await buyBandwidth(account, 1);
    const subuser = await createSubuser(account);
    // 0.9 GB of the residential GB used: the pace uses about 0.9 GB in 7 days, 0.8 GB more than the pool holds.
    const records = Array.from({ length: 9 }, () =>
      usageRecord(username(subuser.name), { bytes_in: 90_000_000, bytes_out: 10_000_000 }),
    );
    expect((await reportUsage(records)).status).toBe(202);
    await settleUsage(account);
    await eventually(
      async () => json(await call("GET", "/v1/residential/balance", { token: account.token })),
      (body) => body.gb_used === 0.9 && body.forecast.avg_daily_gb > 0,
    );
    await runCron(Date.now());
    const events = await lowEvents(account);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ balance_usd: 1, renewals_usd: 0, horizon_days: 7 });
    expect(events[0]?.forecast_usd).toBeGreaterThan(3.5);
    expect(events[0]?.forecast_usd).toBeLessThanOrEqual(3.6);
    expect(events[0]?.need_usd).toBe(events[0]?.forecast_usd);
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";

// Each test waits for several usage reports to pass through the queue.
const SLOW = { timeout: 30_000 };

import { buyBandwidth, createAccount, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, env, gateway, json } from "../helpers/http";
import { batchIps, orderBatch } from "../helpers/isp";
import { authorize, createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, settledFirst, usageRecord } from "../helpers/usage";

const MB = 1_000_000;

afterEach(() => vi.useRealTimers());

/** Usage of `megabytes` (bytes in + out) by the sub-user, in one report. */
async function use(subuser: TestSubuser, megabytes: number, product = "residential") {
  const name =
    product === "isp"
      ? `${env.GATEWAY_USER_PREFIX}_${subuser.name}`
      : username(subuser.name, product === "mobile" ? "type-mob-region-us" : "type-res-region-us");
  const record = usageRecord(name, { product, bytes_in: megabytes * MB - 1000, bytes_out: 1000 });
  const response = await reportUsage([record]);
  expect(response.status).toBe(202);
  expect((await json(response)).accepted).toBe(1);
}

/** The pool's figures (the response's `livemode`, always true here, checked and left out). */
const balance = async (account: TestAccount, product = "residential") => {
  const { livemode, forecast, ...pool } = await json(
    await call("GET", `/v1/${product}/balance`, { token: account.token }),
  );
  expect(livemode).toBe(true);
  expect(forecast.window_days).toBe(7); // its figures: test/routes/order-quotes.test.ts
  return pool;
};

/** The gateway's decision on a residential request by the sub-user (its rotating username). */
const decide = (subuser: TestSubuser) => authorize({ username: username(subuser.name), password: subuser.password });

/** Waits until the pool shows `gbUsed` (usage is applied through the queue). */
const poolAt = (account: TestAccount, gbUsed: number, product = "residential") =>
  eventually(
    settledFirst(account, () => balance(account, product)),
    (body) => Math.abs(body.gb_used - gbUsed) < 1e-9,
  );

const subuserBody = async (account: TestAccount, id: string) =>
  json(await call("GET", `/v1/subusers/${id}`, { token: account.token }));

async function thresholdEvents(accountId: string) {
  const { results } = await env.DB.prepare(
    "SELECT payload FROM events WHERE account_id = ? AND type = 'traffic.threshold' ORDER BY created_at, id",
  )
    .bind(accountId)
    .all<{ payload: string }>();
  return results.map((row) => JSON.parse(row.payload));
}

describe("bandwidth pools consume usage (bytes in + out, 1 GB = 10^9 bytes)", () => {
  it(
    "shows usage in the balance; an exhausted pool refuses with 402 bandwidth-exhausted, shows the overshoot, and a top-up reopens it at once",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      await use(subuser, 300);
      expect(await poolAt(account, 0.3)).toEqual({
        product: "residential",
        gb_purchased: 1,
        gb_used: 0.3,
        gb_remaining: 0.7,
        gb_overdrawn: 0,
        exhausted: false,
      });
      expect((await decide(subuser)).allow).toBe(true);

      await use(subuser, 800);
      expect(await poolAt(account, 1.1)).toMatchObject({ gb_remaining: 0, gb_overdrawn: 0.1, exhausted: true });
      expect(await decide(subuser)).toMatchObject({
        allow: false,
        status: 402,
        error_code: "bandwidth-exhausted",
      });
      // The other product's pool is untouched.
      expect(await balance(account, "mobile")).toMatchObject({ gb_used: 0, exhausted: false });

      // The overshoot is settled from the next top-up, and the gate reopens with the order's commit.
      await buyBandwidth(account, 1);
      expect(await balance(account)).toMatchObject({
        gb_purchased: 2,
        gb_used: 1.1,
        gb_remaining: 0.9,
        gb_overdrawn: 0,
        exhausted: false,
      });
      expect((await decide(subuser)).allow).toBe(true);
    },
  );

  it(
    "tells the gates at the next cron run when a pool's flip did not reach them (the worker stopped before its hook, or the push failed)",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      const pool = () =>
        env.DB.prepare(
          "SELECT exhausted, flips, flips_told FROM bandwidth_pools WHERE account_id = ? AND product = 'residential'",
        )
          .bind(account.id)
          .first<{ exhausted: number; flips: number; flips_told: number }>();
      const topUpBehindTheGates = (sets: string) =>
        env.DB.prepare(
          `UPDATE bandwidth_pools SET purchased_bytes = purchased_bytes + 1000000000, ${sets}
           WHERE account_id = ? AND product = 'residential'`,
        )
          .bind(account.id)
          .run();

      await use(subuser, 1100);
      await poolAt(account, 1.1);
      expect((await decide(subuser)).allow).toBe(false);
      const told = await pool();
      expect(told).toMatchObject({ exhausted: 1 });
      expect(told?.flips_told).toBe(told?.flips);

      // A top-up committed, and the worker stopped before its hook: nothing flipped, nothing told.
      await topUpBehindTheGates("top_up_count = top_up_count + 1");
      expect((await decide(subuser)).allow).toBe(false);
      await runCron(Date.now());
      expect((await decide(subuser)).allow).toBe(true);
      const flippedByCron = await pool();
      expect(flippedByCron).toMatchObject({ exhausted: 0, flips: (told?.flips ?? 0) + 1 });
      expect(flippedByCron?.flips_told).toBe(flippedByCron?.flips);

      // Used up again; then a top-up whose hook flipped the pool but whose push failed.
      await use(subuser, 1000);
      await poolAt(account, 2.1);
      expect((await decide(subuser)).allow).toBe(false);
      await topUpBehindTheGates("exhausted = 0, flips = flips + 1");
      expect((await decide(subuser)).allow).toBe(false);
      await runCron(Date.now());
      expect((await decide(subuser)).allow).toBe(true);
      const retold = await pool();
      expect(retold?.flips_told).toBe(retold?.flips);
    },
  );

  it("a subscription's renewal reopens an exhausted pool at once", SLOW, async () => {
    const account = await createAccount({ balance_usd: 10000 });
    const subscribed = await call("POST", "/v1/subscriptions", {
      token: account.token,
      body: { product: "residential", plan: "starter", cycle: "monthly" },
    });
    expect(subscribed.status).toBe(201);
    const { renews_at: renewsAt } = await json(subscribed);
    const subuser = await createSubuser(account);
    // The starter tier includes 50 GB a month.
    await use(subuser, 50_001);
    await poolAt(account, 50.001);
    expect((await decide(subuser)).allow).toBe(false);

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(renewsAt) + 60_000);
    await runCron(Date.now());
    expect(await balance(account)).toMatchObject({ gb_purchased: 100, exhausted: false });
    expect((await decide(subuser)).allow).toBe(true);
  });

  it("refuses a product the account never bought with 402 bandwidth-exhausted", async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account);
    expect(await decide(subuser)).toMatchObject({
      allow: false,
      status: 402,
      error_code: "bandwidth-exhausted",
    });
  });

  it("reads real usage for subscription downgrades (downgrade_below_usage)", async () => {
    const account = await createAccount({ balance_usd: 10_000 });
    const created = await call("POST", "/v1/subscriptions", {
      token: account.token,
      body: { product: "residential", plan: "pro", cycle: "monthly" },
    });
    expect(created.status).toBe(201);
    const subscription = await json(created);
    const subuser = await createSubuser(account);
    await use(subuser, 60_000);
    await poolAt(account, 60);
    const downgrade = await call("PATCH", `/v1/subscriptions/${subscription.id}`, {
      token: account.token,
      body: { plan: "starter" },
    });
    expect(downgrade.status).toBe(409);
    expect((await json(downgrade)).code).toBe("downgrade_below_usage");
  });
});

describe("monthly sub-user caps (traffic_limit_gb)", () => {
  it(
    "shows traffic_limit_gb and traffic_used_gb, refuses over the cap with 402 traffic-limit-reached, and reopens when the cap is raised or removed",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { traffic_limit_gb: 0.5 });
      expect(await subuserBody(account, subuser.id)).toMatchObject({ traffic_limit_gb: 0.5, traffic_used_gb: 0 });
      const mobileToo = await createSubuser(account, { products: ["residential", "mobile"], traffic_limit_gb: 0.5 });

      await use(subuser, 300);
      await eventually(
        settledFirst(account, () => subuserBody(account, subuser.id)),
        (body) => body.traffic_used_gb === 0.3,
      );
      expect((await decide(subuser)).allow).toBe(true);
      await use(subuser, 250);
      await eventually(
        settledFirst(account, () => subuserBody(account, subuser.id)),
        (body) => body.traffic_used_gb === 0.55,
      );
      const refused = await decide(subuser);
      expect(refused).toMatchObject({ allow: false, status: 402, error_code: "traffic-limit-reached" });

      const raised = await call("PATCH", `/v1/subusers/${subuser.id}`, {
        token: account.token,
        body: { traffic_limit_gb: 1 },
      });
      expect(raised.status).toBe(200);
      expect(await json(raised)).toMatchObject({ traffic_limit_gb: 1, traffic_used_gb: 0.55 });
      expect((await decide(subuser)).allow).toBe(true);
      await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { traffic_limit_gb: 0.5 } });
      expect((await decide(subuser)).allow).toBe(false);
      await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { traffic_limit_gb: null } });
      expect((await decide(subuser)).allow).toBe(true);

      // A cap counts all of the sub-user's products.
      await use(mobileToo, 300, "mobile");
      await use(mobileToo, 300);
      await eventually(
        settledFirst(account, () => subuserBody(account, mobileToo.id)),
        (body) => body.traffic_used_gb === 0.6,
      );
      expect(
        await authorize({
          username: username(mobileToo.name, "type-mob-region-us"),
          password: mobileToo.password,
          product: "mobile",
        }),
      ).toMatchObject({ allow: false, error_code: "traffic-limit-reached" });
    },
  );

  it("caps ISP sub-users too", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const batch = await orderBatch(account, { quantity: 5 }, Date.now() + 10 * 60_000);
    const ips = await batchIps(account, batch.batchId);
    await call("PATCH", `/v1/subusers/${batch.subuser.id}`, { token: account.token, body: { traffic_limit_gb: 0.1 } });
    const ask = async () =>
      json(
        await gateway("/authorize", {
          product: "isp",
          source_ip: "198.51.100.5",
          username: `${env.GATEWAY_USER_PREFIX}_${batch.subuser.name}`,
          password: ips[0]?.pass,
          dest_ip: ips[0]?.ip,
        }),
      );
    expect((await ask()).allow).toBe(true);
    await use(batch.subuser, 150, "isp");
    await eventually(
      settledFirst(account, () => subuserBody(account, batch.subuser.id)),
      (body) => body.traffic_used_gb === 0.15,
    );
    expect(await ask()).toMatchObject({ allow: false, status: 402, error_code: "traffic-limit-reached" });
  });

  it("caps ISP sub-users by day and lifetime too, through the same access rules as every node", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const batch = await orderBatch(account, { quantity: 5 }, Date.now() + 10 * 60_000);
    const ips = await batchIps(account, batch.batchId);
    const patch = (body: Record<string, unknown>) =>
      call("PATCH", `/v1/subusers/${batch.subuser.id}`, { token: account.token, body });
    const ask = async () =>
      json(
        await gateway("/authorize", {
          product: "isp",
          source_ip: "198.51.100.5",
          username: `${env.GATEWAY_USER_PREFIX}_${batch.subuser.name}`,
          password: ips[0]?.pass,
          dest_ip: ips[0]?.ip,
        }),
      );
    await patch({ daily_limit_gb: 0.1 });
    expect((await ask()).allow).toBe(true);
    await use(batch.subuser, 150, "isp");
    await eventually(
      settledFirst(account, () => subuserBody(account, batch.subuser.id)),
      (body) => body.traffic_used_today_gb === 0.15,
    );
    expect(await ask()).toMatchObject({ allow: false, status: 402, error_code: "daily-limit-reached" });
    await patch({ daily_limit_gb: null, lifetime_limit_gb: 0.1 });
    expect(await ask()).toMatchObject({ allow: false, status: 402, error_code: "lifetime-limit-reached" });
    await patch({ lifetime_limit_gb: 1 });
    expect((await ask()).allow).toBe(true);
  });

  it("validates caps: a positive number of GB in whole MB up to 1,000,000, or null", async () => {
    const account = await createAccount();
    for (const value of [0, -1, "1", 0.0001, 2_000_000, true]) {
      const response = await call("POST", "/v1/subusers", {
        token: account.token,
        body: { products: ["residential"], traffic_limit_gb: value },
      });
      expect(response.status, JSON.stringify(value)).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
    const subuser = await createSubuser(account);
    const patched = await call("PATCH", `/v1/subusers/${subuser.id}`, {
      token: account.token,
      body: { traffic_limit_gb: -5 },
    });
    expect(patched.status).toBe(422);
    expect((await subuserBody(account, subuser.id)).traffic_limit_gb).toBeNull();
  });
});

describe("traffic.threshold events", () => {
  it("fires once per pool at 80% and 100% used, and again after a top-up", SLOW, async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const poolEvents = async () =>
      (await thresholdEvents(account.id)).filter((e) => e.scope === "pool" && e.product === "residential");
    await use(subuser, 700);
    await poolAt(account, 0.7);
    expect(await poolEvents()).toEqual([]);
    await use(subuser, 150);
    await poolAt(account, 0.85);
    await use(subuser, 50);
    await poolAt(account, 0.9);
    expect(await poolEvents()).toEqual([
      { scope: "pool", product: "residential", threshold_percent: 80, gb_purchased: 1, gb_used: 0.85 },
    ]);
    await use(subuser, 200);
    await poolAt(account, 1.1);
    await use(subuser, 100);
    await poolAt(account, 1.2);
    expect((await poolEvents()).map((e) => [e.threshold_percent, e.gb_used])).toEqual([
      [80, 0.85],
      [100, 1.1],
    ]);
    await buyBandwidth(account, 1);
    await use(subuser, 500);
    await poolAt(account, 1.7);
    expect((await poolEvents()).map((e) => [e.threshold_percent, e.gb_purchased, e.gb_used])).toEqual([
      [80, 1, 0.85],
      [100, 1, 1.1],
      [80, 2, 1.7],
    ]);
  });

  it("fires once per sub-user and month at 80% and 100% of its cap", SLOW, async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account, { traffic_limit_gb: 1 });
    const capEvents = async () => (await thresholdEvents(account.id)).filter((e) => e.scope === "subuser");
    const usedGb = (gb: number) =>
      eventually(
        settledFirst(account, () => subuserBody(account, subuser.id)),
        (body) => body.traffic_used_gb === gb,
      );
    await use(subuser, 850);
    await usedGb(0.85);
    await use(subuser, 100);
    await usedGb(0.95);
    await use(subuser, 100);
    await usedGb(1.05);
    await use(subuser, 100);
    await usedGb(1.15);
    const month = new Date().toISOString().slice(0, 7);
    expect(await capEvents()).toEqual([
      {
        scope: "subuser",
        subuser: subuser.id,
        period: "month",
        month,
        threshold_percent: 80,
        gb_limit: 1,
        gb_used: 0.85,
      },
      {
        scope: "subuser",
        subuser: subuser.id,
        period: "month",
        month,
        threshold_percent: 100,
        gb_limit: 1,
        gb_used: 1.05,
      },
    ]);
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { buyBandwidth, createAccount, type TestAccount } from "../helpers/accounts";
import { admin, call, env, gateway, json } from "../helpers/http";
import { batchIps, orderBatch } from "../helpers/isp";
import { authorize, createSubuser, type TestSubuser, username } from "../helpers/subusers";
import {
  eventually,
  holdUsageMessages,
  type RecordFields,
  reportUsage,
  settledFirst,
  usageRecord,
} from "../helpers/usage";

/** Each of these tests waits for one or more usage reports to pass through the queue (about a second each). */
const SLOW = { timeout: 40_000 };

const GB = 1_000_000_000;
const MB = 1_000_000;
const MINUTE = 60_000;
const DAY = 86_400_000;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

type Product = "residential" | "mobile" | "isp";

function gatewayName(subuser: TestSubuser, product: Product): string {
  if (product === "isp") return `${env.GATEWAY_USER_PREFIX}_${subuser.name}`;
  return username(subuser.name, product === "mobile" ? "type-mob-region-us" : "type-res-region-us");
}

/** One usage record of exactly `bytes` (bytes_in + bytes_out, split unevenly on purpose). */
function record(subuser: TestSubuser, bytes: number, product: Product = "residential", fields: RecordFields = {}) {
  const bytesOut = Math.min(bytes, 12_345);
  return usageRecord(gatewayName(subuser, product), {
    product,
    bytes_in: bytes - bytesOut,
    bytes_out: bytesOut,
    ...fields,
  });
}

/** Reports the records in one batch and checks the gateway's answer. */
async function report(...records: RecordFields[]): Promise<void> {
  const response = await reportUsage(records);
  expect(response.status).toBe(202);
  expect(await json(response)).toMatchObject({ accepted: records.length, dropped: 0 });
}

const use = (subuser: TestSubuser, bytes: number, product: Product = "residential") =>
  report(record(subuser, bytes, product));

async function balance(account: TestAccount, product: "residential" | "mobile" = "residential") {
  const response = await call("GET", `/v1/${product}/balance`, { token: account.token });
  expect(response.status).toBe(200);
  const { livemode, forecast, ...pool } = await json(response);
  expect(livemode).toBe(true);
  expect(forecast.window_days).toBe(7); // its figures: test/routes/order-quotes.test.ts
  return pool;
}

/** Waits until the pool shows exactly `usedBytes` (usage reaches the pools through the queue). */
const poolAt = (account: TestAccount, usedBytes: number, product: "residential" | "mobile" = "residential") =>
  eventually(
    settledFirst(account, () => balance(account, product)),
    (body) => Math.round(body.gb_used * GB) === usedBytes,
  );

async function subuserBody(account: TestAccount, id: string) {
  const response = await call("GET", `/v1/subusers/${id}`, { token: account.token });
  expect(response.status).toBe(200);
  return json(response);
}

/** Waits until the sub-user's month shows exactly `usedBytes`. */
const monthAt = (account: TestAccount, subuser: TestSubuser, usedBytes: number) =>
  eventually(
    settledFirst(account, () => subuserBody(account, subuser.id)),
    (body) => Math.round(body.traffic_used_gb * GB) === usedBytes,
  );

/** Buys `gb` of one product only (credited first, so the money balance does not matter). */
async function topUp(account: TestAccount, product: "residential" | "mobile", gb: number): Promise<void> {
  const credit = await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: Math.ceil(gb * 1250) / 100 });
  expect(credit.status).toBe(200);
  const response = await call("POST", "/v1/orders", { token: account.token, body: { product, gb } });
  expect(response.status).toBe(201);
}

/** The gateway's decision for a sub-user's request on a product (password auth). */
function ask(subuser: TestSubuser, product: "residential" | "mobile" = "residential", password = subuser.password) {
  return authorize({ username: gatewayName(subuser, product), password, product });
}

const EXHAUSTED = { allow: false, status: 402, error_code: "bandwidth-exhausted" };
const OVER_CAP = { allow: false, status: 402, error_code: "traffic-limit-reached" };

async function patchSubuser(account: TestAccount, id: string, body: unknown) {
  return call("PATCH", `/v1/subusers/${id}`, { token: account.token, body });
}

interface EventRow {
  account_id: string;
  type: string;
  dedupe_key: string;
  payload: Record<string, any>;
}

/** The account's `traffic.threshold` events, oldest first (no route lists events: read the table). */
async function thresholdEvents(accountId: string): Promise<EventRow[]> {
  const { results } = await env.DB.prepare(
    "SELECT account_id, type, dedupe_key, payload FROM events WHERE account_id = ? AND type = 'traffic.threshold' ORDER BY created_at, id",
  )
    .bind(accountId)
    .all<{ account_id: string; type: string; dedupe_key: string; payload: string }>();
  return results.map((row) => ({ ...row, payload: JSON.parse(row.payload) }));
}

const poolEvents = async (accountId: string, product = "residential") =>
  (await thresholdEvents(accountId))
    .map((event) => event.payload)
    .filter((payload) => payload.scope === "pool" && payload.product === product);

const subuserEvents = async (accountId: string, subuserId: string) =>
  (await thresholdEvents(accountId))
    .map((event) => event.payload)
    .filter((payload) => payload.scope === "subuser" && payload.subuser === subuserId);

describe("bandwidth pools consume reported usage (bytes_in + bytes_out, 1 GB = 10^9 bytes)", () => {
  it(
    "counts bytes in + out exactly: 999,999,999 bytes of a 1 GB pool still allow, the last byte exhausts it with 402 bandwidth-exhausted",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      expect(await balance(account)).toEqual({
        product: "residential",
        gb_purchased: 1,
        gb_used: 0,
        gb_remaining: 1,
        gb_overdrawn: 0,
        exhausted: false,
      });
      // Two records whose in and out add up to one byte short of 1 GB.
      await report(
        record(subuser, 600_000_000, "residential", { bytes_in: 599_999_000, bytes_out: 1_000 }),
        record(subuser, 399_999_999, "residential", { bytes_in: 1, bytes_out: 399_999_998 }),
      );
      expect(await poolAt(account, GB - 1)).toEqual({
        product: "residential",
        gb_purchased: 1,
        gb_used: 0.999999999,
        gb_remaining: 0.000000001,
        gb_overdrawn: 0,
        exhausted: false,
      });
      expect(await ask(subuser)).toMatchObject({ allow: true });

      await report(record(subuser, 1, "residential", { bytes_in: 0, bytes_out: 1 }));
      expect(await poolAt(account, GB)).toEqual({
        product: "residential",
        gb_purchased: 1,
        gb_used: 1,
        gb_remaining: 0,
        gb_overdrawn: 0,
        exhausted: true,
      });
      expect(await ask(subuser)).toEqual(EXHAUSTED);
    },
  );

  it(
    "an exhausted pool refuses every sub-user of the account (also those whose gate decided before), but not the other product nor another account",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const heavy = await createSubuser(account);
      const both = await createSubuser(account, { products: ["residential", "mobile"] });
      const neighbour = await createAccount({ bandwidthGb: 1 });
      const theirs = await createSubuser(neighbour);
      // Every gate decides once first, so each holds the pool figures from before the usage.
      for (const subuser of [heavy, both, theirs]) expect((await ask(subuser)).allow).toBe(true);
      expect((await ask(both, "mobile")).allow).toBe(true);

      await use(heavy, 1_200 * MB);
      await poolAt(account, 1_200 * MB);
      expect(await ask(heavy)).toEqual(EXHAUSTED);
      expect(await ask(both)).toEqual(EXHAUSTED);
      expect((await ask(both, "mobile")).allow).toBe(true);
      expect(await balance(account, "mobile")).toMatchObject({ gb_used: 0, gb_remaining: 1, exhausted: false });
      expect((await ask(theirs)).allow).toBe(true);
      expect(await balance(neighbour)).toMatchObject({ gb_used: 0, exhausted: false });
      // A sub-user created after the pool ran out is refused too.
      const late = await createSubuser(account);
      expect(await ask(late)).toEqual(EXHAUSTED);
    },
  );

  it(
    "402 comes after credentials, status and product: a wrong password is still 407, a disabled sub-user 403, a missing product 403",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      const other = await createSubuser(account);
      await use(subuser, GB);
      await poolAt(account, GB);
      expect(await ask(subuser)).toEqual(EXHAUSTED);
      expect(await ask(subuser, "residential", "wrong-password")).toEqual({
        allow: false,
        status: 407,
        error_code: "auth-failed",
      });
      expect(await ask(subuser, "mobile")).toEqual({ allow: false, status: 403, error_code: "product-not-allowed" });
      expect((await patchSubuser(account, other.id, { status: "disabled" })).status).toBe(200);
      expect(await ask(other)).toEqual({ allow: false, status: 403, error_code: "subuser-disabled" });
    },
  );

  it("mobile usage consumes only the mobile pool, and exhausts mobile alone", SLOW, async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
    await report(record(subuser, 700 * MB, "mobile"), record(subuser, 200 * MB));
    await poolAt(account, 700 * MB, "mobile");
    await poolAt(account, 200 * MB);
    await use(subuser, 300 * MB, "mobile");
    expect(await poolAt(account, GB, "mobile")).toMatchObject({ gb_remaining: 0, exhausted: true });
    expect(await ask(subuser, "mobile")).toEqual(EXHAUSTED);
    expect(await balance(account)).toMatchObject({ gb_used: 0.2, gb_remaining: 0.8, exhausted: false });
    expect((await ask(subuser)).allow).toBe(true);
  });

  it(
    "usage past the end of the pool is shown as gb_overdrawn and paid first from the next top-ups: a top-up that does not cover it leaves the pool exhausted, a larger one reopens it at once",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      await use(subuser, 1_500 * MB);
      expect(await poolAt(account, 1_500 * MB)).toEqual({
        product: "residential",
        gb_purchased: 1,
        gb_used: 1.5,
        gb_remaining: 0,
        gb_overdrawn: 0.5,
        exhausted: true,
      });
      expect(await ask(subuser)).toEqual(EXHAUSTED);

      await topUp(account, "residential", 0.3);
      expect(await balance(account)).toMatchObject({
        gb_purchased: 1.3,
        gb_used: 1.5,
        gb_remaining: 0,
        gb_overdrawn: 0.2,
        exhausted: true,
      });
      expect(await ask(subuser)).toEqual(EXHAUSTED);

      // Exactly covering the overshoot leaves nothing to spend: still used up.
      await topUp(account, "residential", 0.2);
      expect(await balance(account)).toMatchObject({
        gb_purchased: 1.5,
        gb_remaining: 0,
        gb_overdrawn: 0,
        exhausted: true,
      });
      expect(await ask(subuser)).toEqual(EXHAUSTED);

      await topUp(account, "residential", 0.25);
      expect(await balance(account)).toEqual({
        product: "residential",
        gb_purchased: 1.75,
        gb_used: 1.5,
        gb_remaining: 0.25,
        gb_overdrawn: 0,
        exhausted: false,
      });
      expect((await ask(subuser)).allow).toBe(true);
      // The top-up reopened residential only; mobile was never touched.
      expect(await balance(account, "mobile")).toMatchObject({ gb_purchased: 1, gb_used: 0, exhausted: false });
    },
  );

  it(
    "a product never bought is refused with 402 bandwidth-exhausted; usage reported for it is owed and paid from the first purchase, which reopens it",
    SLOW,
    async () => {
      const account = await createAccount();
      const subuser = await createSubuser(account);
      expect(await balance(account)).toEqual({
        product: "residential",
        gb_purchased: 0,
        gb_used: 0,
        gb_remaining: 0,
        gb_overdrawn: 0,
        exhausted: true,
      });
      expect(await ask(subuser)).toEqual(EXHAUSTED);

      await use(subuser, 200 * MB);
      expect(await poolAt(account, 200 * MB)).toEqual({
        product: "residential",
        gb_purchased: 0,
        gb_used: 0.2,
        gb_remaining: 0,
        gb_overdrawn: 0.2,
        exhausted: true,
      });
      expect(await ask(subuser)).toEqual(EXHAUSTED);

      await buyBandwidth(account, 1);
      expect(await balance(account)).toEqual({
        product: "residential",
        gb_purchased: 1,
        gb_used: 0.2,
        gb_remaining: 0.8,
        gb_overdrawn: 0,
        exhausted: false,
      });
      expect((await ask(subuser)).allow).toBe(true);
      // The pool keeps consuming normally after the first purchase.
      await use(subuser, 800 * MB);
      expect(await poolAt(account, GB)).toMatchObject({ gb_remaining: 0, exhausted: true });
      expect(await ask(subuser)).toEqual(EXHAUSTED);
    },
  );
});

describe("subscriptions: downgrade_below_usage reads the real usage of the current period", () => {
  it(
    "refuses a downgrade once this period's reported usage exceeds the lower tier's GB; usage before the period and the other product's usage do not count",
    SLOW,
    async () => {
      const account = await createAccount({ balance_usd: 10_000 });
      const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
      // Before the subscription: 70 GB of residential (owed) and 60 GB of mobile.
      await report(record(subuser, 70 * GB), record(subuser, 60 * GB, "mobile"));
      await poolAt(account, 70 * GB);
      await poolAt(account, 60 * GB, "mobile");

      expect(await ask(subuser)).toEqual(EXHAUSTED);
      const created = await call("POST", "/v1/subscriptions", {
        token: account.token,
        body: { product: "residential", plan: "pro", cycle: "monthly" },
      });
      expect(created.status).toBe(201);
      const subscription = await json(created);
      expect(await balance(account)).toMatchObject({ gb_purchased: 500, gb_used: 70, exhausted: false });
      // The subscription's GB reopen the owed pool at once.
      expect((await ask(subuser)).allow).toBe(true);
      const downgrade = () =>
        call("PATCH", `/v1/subscriptions/${subscription.id}`, { token: account.token, body: { plan: "starter" } });

      // This period: exactly the starter tier's 50 GB, which is not above it.
      await use(subuser, 50 * GB);
      await poolAt(account, 120 * GB);
      const allowed = await downgrade();
      expect(allowed.status).toBe(200);
      expect(await json(allowed)).toMatchObject({ plan: "pro", pending: { plan: "starter" } });

      // One more MB of residential usage this period: 50.001 GB > 50 GB.
      await use(subuser, MB);
      await poolAt(account, 120 * GB + MB);
      const refused = await downgrade();
      expect(refused.status).toBe(409);
      expect((await json(refused)).code).toBe("downgrade_below_usage");
    },
  );
});

describe("monthly sub-user caps (traffic_limit_gb, traffic_used_gb)", () => {
  it(
    "shows traffic_limit_gb and traffic_used_gb (bytes in + out this UTC month) on create, get, list and PATCH; at exactly the cap the gateway answers 402 traffic-limit-reached",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const created = await createSubuser(account, { traffic_limit_gb: 0.5 });
      expect(created).toMatchObject({ traffic_limit_gb: 0.5, traffic_used_gb: 0 });
      const uncapped = await createSubuser(account);
      expect(uncapped).toMatchObject({ traffic_limit_gb: null, traffic_used_gb: 0 });

      await report(
        record(created, 300_000_000, "residential", { bytes_in: 250_000_000, bytes_out: 50_000_000 }),
        record(created, 199_999_999),
        record(uncapped, 2 * GB),
      );
      expect(await monthAt(account, created, 500 * MB - 1)).toMatchObject({
        traffic_limit_gb: 0.5,
        traffic_used_gb: 0.499999999,
      });
      expect(await monthAt(account, uncapped, 2 * GB)).toMatchObject({ traffic_limit_gb: null, traffic_used_gb: 2 });
      const listed = await json(await call("GET", "/v1/subusers?limit=100", { token: account.token }));
      const byId = new Map(listed.data.map((row: Record<string, any>) => [row.id, row]));
      expect(byId.get(created.id)).toMatchObject({ traffic_limit_gb: 0.5, traffic_used_gb: 0.499999999 });
      expect(byId.get(uncapped.id)).toMatchObject({ traffic_limit_gb: null, traffic_used_gb: 2 });
      expect((await ask(created)).allow).toBe(true);
      expect((await ask(uncapped)).allow).toBe(true);

      await use(created, 1);
      await monthAt(account, created, 500 * MB);
      expect(await ask(created)).toEqual(OVER_CAP);
      const patched = await patchSubuser(account, created.id, { label: "renamed-capped" });
      expect(patched.status).toBe(200);
      expect(await json(patched)).toMatchObject({ traffic_limit_gb: 0.5, traffic_used_gb: 0.5 });
      // The account's pool is far from used up: the refusal is the sub-user's own cap.
      expect(await balance(account)).toMatchObject({ exhausted: false });
      expect((await ask(uncapped)).allow).toBe(true);
    },
  );

  it(
    "changing the cap takes effect at once: lowering it below the month's usage refuses, raising it above or removing it (null) reopens",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { traffic_limit_gb: 1 });
      await use(subuser, 400 * MB);
      await monthAt(account, subuser, 400 * MB);
      expect((await ask(subuser)).allow).toBe(true);

      const lowered = await patchSubuser(account, subuser.id, { traffic_limit_gb: 0.4 });
      expect(lowered.status).toBe(200);
      expect(await json(lowered)).toMatchObject({ traffic_limit_gb: 0.4, traffic_used_gb: 0.4 });
      expect(await ask(subuser)).toEqual(OVER_CAP);

      const raised = await patchSubuser(account, subuser.id, { traffic_limit_gb: 0.401 });
      expect(await json(raised)).toMatchObject({ traffic_limit_gb: 0.401 });
      expect((await ask(subuser)).allow).toBe(true);

      await patchSubuser(account, subuser.id, { traffic_limit_gb: 0.1 });
      expect(await ask(subuser)).toEqual(OVER_CAP);
      const removed = await patchSubuser(account, subuser.id, { traffic_limit_gb: null });
      expect(await json(removed)).toMatchObject({ traffic_limit_gb: null, traffic_used_gb: 0.4 });
      expect((await ask(subuser)).allow).toBe(true);
      // A PATCH that does not mention the cap keeps it.
      await patchSubuser(account, subuser.id, { traffic_limit_gb: 0.3 });
      await patchSubuser(account, subuser.id, { label: "still-capped" });
      expect((await subuserBody(account, subuser.id)).traffic_limit_gb).toBe(0.3);
      expect(await ask(subuser)).toEqual(OVER_CAP);
    },
  );

  it(
    "a cap lowered or set while usage is still on its way is enforced once that usage lands (402 traffic-limit-reached)",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const lowered = await createSubuser(account, { traffic_limit_gb: 1 });
      const newlyCapped = await createSubuser(account);
      // Hold the queue's messages, as if the consumer were a few seconds behind, and deliver them by hand.
      const { sent, deliver } = holdUsageMessages();
      await report(record(lowered, 600 * MB), record(newlyCapped, 600 * MB));
      expect(sent.length).toBeGreaterThan(0);

      expect((await patchSubuser(account, lowered.id, { traffic_limit_gb: 0.5 })).status).toBe(200);
      expect((await patchSubuser(account, newlyCapped.id, { traffic_limit_gb: 0.5 })).status).toBe(200);
      expect((await ask(lowered)).allow).toBe(true);
      expect((await ask(newlyCapped)).allow).toBe(true);

      expect((await deliver()).retryMessages).toEqual([]);

      expect(await subuserBody(account, lowered.id)).toMatchObject({ traffic_limit_gb: 0.5, traffic_used_gb: 0.6 });
      expect(await subuserBody(account, newlyCapped.id)).toMatchObject({
        traffic_limit_gb: 0.5,
        traffic_used_gb: 0.6,
      });
      // The events see the new caps (both sub-users passed 100%)…
      expect((await subuserEvents(account.id, lowered.id)).map((e) => e.threshold_percent)).toEqual([80, 100]);
      expect((await subuserEvents(account.id, newlyCapped.id)).map((e) => e.threshold_percent)).toEqual([80, 100]);
      // …and so must the gateway, also after later usage arrives the normal way.
      vi.restoreAllMocks();
      await report(record(lowered, 100 * MB), record(newlyCapped, 100 * MB));
      await monthAt(account, lowered, 700 * MB);
      await monthAt(account, newlyCapped, 700 * MB);
      expect([await ask(lowered), await ask(newlyCapped)]).toEqual([OVER_CAP, OVER_CAP]);
    },
  );

  it(
    "counts usage in the UTC month of the record: last month's usage is not this month's traffic_used_gb, and a new UTC month reopens a capped sub-user",
    SLOW,
    async () => {
      // Thirty seconds before a UTC month ends, some days ahead of the real clock.
      const ahead = new Date(Date.now() + 2 * DAY);
      const nextMonth = Date.UTC(ahead.getUTCFullYear(), ahead.getUTCMonth() + 1, 1);
      const lastMonthEnd = nextMonth - 30_000;
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(lastMonthEnd);
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { traffic_limit_gb: 0.5 });
      await report(record(subuser, 600 * MB, "residential", { ts: new Date(lastMonthEnd - MINUTE).toISOString() }));
      await monthAt(account, subuser, 600 * MB);
      expect(await ask(subuser)).toEqual(OVER_CAP);

      vi.setSystemTime(nextMonth + 30_000);
      expect(await subuserBody(account, subuser.id)).toMatchObject({ traffic_limit_gb: 0.5, traffic_used_gb: 0 });
      expect((await ask(subuser)).allow).toBe(true);
      // A late record of last month counts for last month only; this month's record counts for this month.
      await report(
        record(subuser, 100 * MB, "residential", { ts: new Date(lastMonthEnd).toISOString() }),
        record(subuser, 200 * MB, "residential", { ts: new Date(nextMonth + 10_000).toISOString() }),
      );
      await poolAt(account, 900 * MB);
      expect(await subuserBody(account, subuser.id)).toMatchObject({ traffic_used_gb: 0.2 });
      expect((await ask(subuser)).allow).toBe(true);
      // The new month's cap is enforced on the new month's usage.
      await report(record(subuser, 300 * MB, "residential", { ts: new Date(nextMonth + 20_000).toISOString() }));
      await monthAt(account, subuser, 500 * MB);
      expect(await ask(subuser)).toEqual(OVER_CAP);
    },
  );

  it(
    "caps ISP sub-users too (402 traffic-limit-reached on the ISP path), and ISP usage consumes no bandwidth pool",
    SLOW,
    async () => {
      const account = await createAccount({ balance_usd: 1000, bandwidthGb: 1 });
      const batch = await orderBatch(account, { quantity: 5 }, Date.now() + 10 * MINUTE);
      const ips = await batchIps(account, batch.batchId);
      const capped = await patchSubuser(account, batch.subuser.id, { traffic_limit_gb: 0.2 });
      expect(await json(capped)).toMatchObject({ traffic_limit_gb: 0.2, traffic_used_gb: 0 });
      const askIsp = async () =>
        json(
          await gateway("/authorize", {
            product: "isp",
            source_ip: "198.51.100.5",
            username: gatewayName(batch.subuser, "isp"),
            password: ips[0]?.pass,
            dest_ip: ips[0]?.ip,
          }),
        );
      expect(await askIsp()).toMatchObject({ allow: true });

      await report(record(batch.subuser, 200 * MB, "isp", { dest_ip: ips[0]?.ip }));
      await monthAt(account, batch.subuser, 200 * MB);
      expect(await askIsp()).toEqual(OVER_CAP);
      expect(await balance(account)).toMatchObject({ gb_used: 0, exhausted: false });
      expect(await balance(account, "mobile")).toMatchObject({ gb_used: 0, exhausted: false });

      await patchSubuser(account, batch.subuser.id, { traffic_limit_gb: 0.201 });
      expect(await askIsp()).toMatchObject({ allow: true });
      await patchSubuser(account, batch.subuser.id, { traffic_limit_gb: 0.1 });
      expect(await askIsp()).toEqual(OVER_CAP);
      await patchSubuser(account, batch.subuser.id, { traffic_limit_gb: null });
      expect(await askIsp()).toMatchObject({ allow: true });
    },
  );

  it("validates caps on create and PATCH: a number of GB in whole MB from 0.001 to 1,000,000, or null; anything else is 422", async () => {
    const account = await createAccount();
    const invalid: unknown[] = [
      0,
      -1,
      -0.5,
      "1",
      "abc",
      true,
      [1],
      { gb: 1 },
      0.0001,
      1.0005,
      1_000_000.001,
      2_000_000,
    ];
    for (const value of invalid) {
      const response = await call("POST", "/v1/subusers", {
        token: account.token,
        body: { products: ["residential"], traffic_limit_gb: value },
      });
      expect(response.status, `create ${JSON.stringify(value)}`).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
    // 1e400 parses as Infinity; 1e308 is a number far beyond the bound.
    for (const raw of ["1e400", "1e308", "-1e400"]) {
      const response = await call("POST", "/v1/subusers", {
        token: account.token,
        body: `{"products":["residential"],"traffic_limit_gb":${raw}}`,
      });
      expect(response.status, `create ${raw}`).toBe(422);
    }
    const subuser = await createSubuser(account, { traffic_limit_gb: 2 });
    for (const value of [-5, 0, "2", 1e12]) {
      const response = await patchSubuser(account, subuser.id, { traffic_limit_gb: value });
      expect(response.status, `patch ${JSON.stringify(value)}`).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
    expect((await subuserBody(account, subuser.id)).traffic_limit_gb).toBe(2);

    const smallest = await createSubuser(account, { traffic_limit_gb: 0.001 });
    expect((await subuserBody(account, smallest.id)).traffic_limit_gb).toBe(0.001);
    const largest = await patchSubuser(account, smallest.id, { traffic_limit_gb: 1_000_000 });
    expect(largest.status).toBe(200);
    expect((await json(largest)).traffic_limit_gb).toBe(1_000_000);
    const cleared = await patchSubuser(account, smallest.id, { traffic_limit_gb: null });
    expect((await json(cleared)).traffic_limit_gb).toBeNull();
  });
});

describe("traffic.threshold events", () => {
  it(
    "a pool records 80% at exactly 80% of purchased and 100% at exactly 100%, each once however much more usage arrives, naming the product and figures",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      await use(subuser, 800 * MB - 1);
      await poolAt(account, 800 * MB - 1);
      expect(await poolEvents(account.id)).toEqual([]);
      await use(subuser, 1);
      await poolAt(account, 800 * MB);
      expect(await poolEvents(account.id)).toEqual([
        { scope: "pool", product: "residential", threshold_percent: 80, gb_purchased: 1, gb_used: 0.8 },
      ]);
      await use(subuser, 200 * MB - 1);
      await poolAt(account, GB - 1);
      expect(await poolEvents(account.id)).toHaveLength(1);
      await use(subuser, 1);
      await poolAt(account, GB);
      await use(subuser, 300 * MB);
      await poolAt(account, 1_300 * MB);
      expect(await poolEvents(account.id)).toEqual([
        { scope: "pool", product: "residential", threshold_percent: 80, gb_purchased: 1, gb_used: 0.8 },
        { scope: "pool", product: "residential", threshold_percent: 100, gb_purchased: 1, gb_used: 1 },
      ]);
      const rows = await thresholdEvents(account.id);
      expect(rows.every((row) => row.account_id === account.id && row.type === "traffic.threshold")).toBe(true);
      expect(new Set(rows.map((row) => row.dedupe_key)).size).toBe(rows.length);
      // Only the pool that was used: mobile recorded nothing.
      expect(await poolEvents(account.id, "mobile")).toEqual([]);
    },
  );

  it(
    "usage that jumps past both thresholds records both at once; after a top-up each fires again once when the pool passes it again",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 1 });
      const subuser = await createSubuser(account);
      await use(subuser, 1_300 * MB);
      await poolAt(account, 1_300 * MB);
      expect(await poolEvents(account.id)).toEqual([
        { scope: "pool", product: "residential", threshold_percent: 80, gb_purchased: 1, gb_used: 1.3 },
        { scope: "pool", product: "residential", threshold_percent: 100, gb_purchased: 1, gb_used: 1.3 },
      ]);

      await buyBandwidth(account, 1); // 1.3 of 2 GB: 65%
      await use(subuser, 200 * MB);
      await poolAt(account, 1_500 * MB);
      expect(await poolEvents(account.id)).toHaveLength(2);
      await use(subuser, 100 * MB); // 1.6 of 2 GB: 80%
      await poolAt(account, 1_600 * MB);
      await use(subuser, 500 * MB); // 2.1 of 2 GB
      await poolAt(account, 2_100 * MB);
      await use(subuser, 100 * MB);
      await poolAt(account, 2_200 * MB);
      expect((await poolEvents(account.id)).map((e) => [e.threshold_percent, e.gb_purchased, e.gb_used])).toEqual([
        [80, 1, 1.3],
        [100, 1, 1.3],
        [80, 2, 1.6],
        [100, 2, 2.1],
      ]);
    },
  );

  it("each product's pool has its own thresholds, and a pool with nothing bought records none", SLOW, async () => {
    const account = await createAccount();
    const subuser = await createSubuser(account, { products: ["residential", "mobile"] });
    await topUp(account, "mobile", 1);
    await report(record(subuser, 900 * MB, "mobile"), record(subuser, 3 * GB));
    await poolAt(account, 900 * MB, "mobile");
    await poolAt(account, 3 * GB);
    expect(await poolEvents(account.id, "mobile")).toEqual([
      { scope: "pool", product: "mobile", threshold_percent: 80, gb_purchased: 1, gb_used: 0.9 },
    ]);
    // Residential was never bought: 3 GB owed, but no percentage of nothing.
    expect(await poolEvents(account.id)).toEqual([]);
  });

  it(
    "a sub-user records 80% and 100% of its cap once each, naming the sub-user, month, cap and usage; uncapped sub-users record nothing",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 100 });
      const capped = await createSubuser(account, { traffic_limit_gb: 0.5 });
      const other = await createSubuser(account, { traffic_limit_gb: 2 });
      const uncapped = await createSubuser(account);
      const month = new Date().toISOString().slice(0, 7);
      // One batch: `capped` reaches exactly 80%, `other` jumps past both, `uncapped` uses a lot.
      await report(record(capped, 400 * MB), record(other, 2_500 * MB), record(uncapped, 50 * GB));
      await monthAt(account, capped, 400 * MB);
      await monthAt(account, uncapped, 50 * GB);
      expect(await subuserEvents(account.id, capped.id)).toEqual([
        {
          scope: "subuser",
          subuser: capped.id,
          period: "month",
          month,
          threshold_percent: 80,
          gb_limit: 0.5,
          gb_used: 0.4,
        },
      ]);
      expect(await subuserEvents(account.id, other.id)).toEqual([
        {
          scope: "subuser",
          subuser: other.id,
          period: "month",
          month,
          threshold_percent: 80,
          gb_limit: 2,
          gb_used: 2.5,
        },
        {
          scope: "subuser",
          subuser: other.id,
          period: "month",
          month,
          threshold_percent: 100,
          gb_limit: 2,
          gb_used: 2.5,
        },
      ]);
      expect(await subuserEvents(account.id, uncapped.id)).toEqual([]);

      await use(capped, 50 * MB);
      await monthAt(account, capped, 450 * MB);
      await use(capped, 50 * MB);
      await monthAt(account, capped, 500 * MB);
      await report(record(capped, 300 * MB), record(other, 100 * MB));
      await monthAt(account, capped, 800 * MB);
      await monthAt(account, other, 2_600 * MB);
      expect(await subuserEvents(account.id, capped.id)).toEqual([
        {
          scope: "subuser",
          subuser: capped.id,
          period: "month",
          month,
          threshold_percent: 80,
          gb_limit: 0.5,
          gb_used: 0.4,
        },
        {
          scope: "subuser",
          subuser: capped.id,
          period: "month",
          month,
          threshold_percent: 100,
          gb_limit: 0.5,
          gb_used: 0.5,
        },
      ]);
      expect(await subuserEvents(account.id, other.id)).toHaveLength(2);
      // 52.9 of 100 GB: the account's pool passed no threshold.
      expect(await poolEvents(account.id)).toEqual([]);
    },
  );
});

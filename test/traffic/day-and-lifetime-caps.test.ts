import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, gateway, json } from "../helpers/http";
import { authorize, createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, holdUsageMessages, reportUsage, usageRecord } from "../helpers/usage";

// Each test waits for several usage reports to pass through the queue.
const SLOW = { timeout: 30_000 };
const MB = 1_000_000;
const DAY = 86_400_000;
/**
 * How long a cap may take to refuse once usage passes it, here: the usage's wait to be counted (the shard queues'
 * window, 0 in tests; 55 s in production, where the API promises 60 s) plus the settlement and the gate's push.
 */
const USAGE_DELAY_MS = 5_000;

afterEach(() => vi.useRealTimers());

/** Noon (UTC) of a day some days ahead of the real clock, early in its month (alarms run on real time). */
function noonAhead(): number {
  const ahead = new Date(Date.now() + 2 * DAY);
  const day = Math.min(ahead.getUTCDate(), 20);
  const month = ahead.getUTCDate() > 20 ? ahead.getUTCMonth() + 1 : ahead.getUTCMonth();
  return Date.UTC(ahead.getUTCFullYear(), month, day, 12);
}

const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/** Usage of `megabytes` (bytes in + out) by the sub-user now, in one report. */
async function use(subuser: TestSubuser, megabytes: number): Promise<void> {
  const record = usageRecord(username(subuser.name), { bytes_in: megabytes * MB - 1000, bytes_out: 1000 });
  const response = await reportUsage([record]);
  expect((await json(response)).accepted).toBe(1);
}

const decide = (subuser: TestSubuser) => authorize({ username: username(subuser.name), password: subuser.password });

/** What a gateway node decides the sub-user's requests from. */
async function snapshot(subuser: TestSubuser) {
  return (await json(await gateway("/subusers", { node: "caps-node", names: [subuser.name] }))).subusers[0];
}

const subuserBody = async (account: TestAccount, id: string) =>
  json(await call("GET", `/v1/subusers/${id}`, { token: account.token }));

/** Waits (without settling anything) until the sub-user's figures hold. */
const usageShows = (account: TestAccount, subuser: TestSubuser, holds: (body: Record<string, any>) => boolean) =>
  eventually(() => subuserBody(account, subuser.id), holds);

async function capEvents(subuser: TestSubuser) {
  const { results } = await env.DB.prepare(
    `SELECT payload FROM events WHERE type = 'traffic.threshold' AND json_extract(payload, '$.subuser') = ?
     ORDER BY created_at, id`,
  )
    .bind(subuser.id)
    .all<{ payload: string }>();
  return results.map((row) => JSON.parse(row.payload));
}

const refusedWith = (code: string) => (decision: Record<string, any>) =>
  !decision.allow && decision.status === 402 && decision.error_code === code;

describe("daily caps (daily_limit_gb)", () => {
  it(
    "refuses with 402 daily-limit-reached at the gate and in the node snapshot within the usage delay, shows traffic_used_today_gb, announces 80% and 100% of the day once each, and reopens at 00:00 UTC",
    SLOW,
    async () => {
      const noon = noonAhead();
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(noon);
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { daily_limit_gb: 0.5 });
      const day = dayOf(noon);

      await use(subuser, 300);
      await usageShows(account, subuser, (body) => body.traffic_used_today_gb === 0.3);
      expect((await decide(subuser)).allow).toBe(true);
      await use(subuser, 120);
      await eventually(
        () => capEvents(subuser),
        (events) => events.length === 1,
        USAGE_DELAY_MS,
      );
      expect((await decide(subuser)).allow).toBe(true);

      await use(subuser, 100);
      await eventually(() => decide(subuser), refusedWith("daily-limit-reached"), USAGE_DELAY_MS);
      expect(await snapshot(subuser)).toMatchObject({ day_cap: { day, reached: true }, lifetime_cap_reached: false });
      // Usage still in flight counts; the day's thresholds are announced once each.
      await use(subuser, 50);
      expect(await usageShows(account, subuser, (body) => body.traffic_used_today_gb === 0.57)).toMatchObject({
        daily_limit_gb: 0.5,
        traffic_used_today_gb: 0.57,
        traffic_used_gb: 0.57,
        traffic_used_lifetime_gb: 0.57,
      });
      const announced = { scope: "subuser", subuser: subuser.id, period: "day", day, gb_limit: 0.5 };
      expect(await capEvents(subuser)).toEqual([
        { ...announced, threshold_percent: 80, gb_used: 0.42 },
        { ...announced, threshold_percent: 100, gb_used: 0.52 },
      ]);

      // The next UTC day: nothing is written, the figure's day is simply not today's.
      vi.setSystemTime(noon + 12 * 60 * 60_000 + 30_000);
      expect((await decide(subuser)).allow).toBe(true);
      expect((await snapshot(subuser)).day_cap).toEqual({ day: dayOf(noon + DAY), reached: false });
      await use(subuser, 200);
      expect(await usageShows(account, subuser, (body) => body.traffic_used_today_gb === 0.2)).toMatchObject({
        traffic_used_gb: 0.77,
        traffic_used_lifetime_gb: 0.77,
      });
      expect((await decide(subuser)).allow).toBe(true);
    },
  );

  it(
    "counts usage delivered twice once in the day's and the lifetime's figures (a redelivered queue message)",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { daily_limit_gb: 1, lifetime_limit_gb: 1 });
      const held = holdUsageMessages();
      await use(subuser, 600);
      await held.deliver();
      await held.deliver();
      vi.restoreAllMocks();
      expect(await subuserBody(account, subuser.id)).toMatchObject({
        traffic_used_today_gb: 0.6,
        traffic_used_lifetime_gb: 0.6,
      });
      await use(subuser, 250);
      await eventually(
        () => capEvents(subuser),
        (events) => events.length === 2,
        USAGE_DELAY_MS,
      );
      expect((await capEvents(subuser)).map((event) => [event.period, event.threshold_percent, event.gb_used])).toEqual(
        [
          ["day", 80, 0.85],
          ["lifetime", 80, 0.85],
        ],
      );
      expect((await decide(subuser)).allow).toBe(true);
    },
  );
});

describe("lifetime caps (lifetime_limit_gb)", () => {
  it(
    "refuses with 402 lifetime-limit-reached across months until raised; raising it reopens at once, lowering it below the usage refuses at once, and each cap's thresholds are announced",
    SLOW,
    async () => {
      const noon = noonAhead();
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(noon);
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { lifetime_limit_gb: 0.5 });

      await use(subuser, 300);
      await usageShows(account, subuser, (body) => body.traffic_used_lifetime_gb === 0.3);
      expect((await decide(subuser)).allow).toBe(true);
      await use(subuser, 250);
      await eventually(() => decide(subuser), refusedWith("lifetime-limit-reached"), USAGE_DELAY_MS);
      expect((await snapshot(subuser)).lifetime_cap_reached).toBe(true);

      // A new month resets the month's figure, not the lifetime's.
      const date = new Date(noon);
      vi.setSystemTime(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1, 12));
      expect(await subuserBody(account, subuser.id)).toMatchObject({
        traffic_used_gb: 0,
        traffic_used_today_gb: 0,
        traffic_used_lifetime_gb: 0.55,
      });
      expect(await decide(subuser)).toMatchObject({ allow: false, error_code: "lifetime-limit-reached" });

      const patch = (lifetime: number) =>
        call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { lifetime_limit_gb: lifetime } });
      const raised = await patch(1);
      expect(await json(raised)).toMatchObject({ lifetime_limit_gb: 1, traffic_used_lifetime_gb: 0.55 });
      expect((await decide(subuser)).allow).toBe(true);
      expect((await snapshot(subuser)).lifetime_cap_reached).toBe(false);
      await use(subuser, 100);
      await usageShows(account, subuser, (body) => body.traffic_used_lifetime_gb === 0.65);
      expect((await decide(subuser)).allow).toBe(true);

      // Lowered below what it used (65% of the old cap: not settled yet): refused before the PATCH answers.
      expect((await patch(0.6)).status).toBe(200);
      expect(await decide(subuser)).toMatchObject({ allow: false, error_code: "lifetime-limit-reached" });
      expect(
        (await capEvents(subuser)).map((event) => [event.period, event.threshold_percent, event.gb_limit]),
      ).toEqual([
        ["lifetime", 80, 0.5],
        ["lifetime", 100, 0.5],
        ["lifetime", 80, 0.6],
        ["lifetime", 100, 0.6],
      ]);
    },
  );
});

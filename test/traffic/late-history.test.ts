import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { env } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { DAY, HOUR, iso, MINUTE, range } from "../helpers/traffic-sums";
import { eventually, type RecordFields, reportUsage, traffic, usageRecord } from "../helpers/usage";

// Usage of long ago arriving after recent usage (a backfill of history, a gateway's queue drained late): it is added
// to the rows its buckets were folded into, and never takes the place of newer usage. The store's rings reuse a
// slot a ring's length later (5 minutes: 14 days + 1 hour; hours: 92 days), so a late bucket that old shares its
// slot with a newer one.

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const FIVE_MINUTE_RING = 14 * DAY + HOUR;

const storeOf = (account: TestAccount) => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));

/** 12:07:30 of a day a month ahead of the real clock (alarms set by the stores then never fire by themselves). */
function aheadOfTheClock(): number {
  const day = Date.now() + 30 * DAY;
  return day - (day % DAY) + 12 * HOUR + 7 * MINUTE + 30_000;
}

async function requests(account: TestAccount, query: string): Promise<number> {
  return (await traffic(account, "residential", query)).rows[0]?.requests ?? 0;
}

async function report(account: TestAccount, records: RecordFields[], query: string, expected: number) {
  expect((await reportUsage(records)).status).toBe(202);
  await eventually(
    () => requests(account, query),
    (counted) => counted === expected,
  );
}

describe("late usage of buckets past the 5-minute and hour rings", () => {
  it("history of 14 days ago arriving after recent sticky usage never replaces it: counted before and after its hour folds", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = aheadOfTheClock();
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const window = range(t0 - 20 * DAY, t0 + 2 * HOUR);
    // Sticky-session usage of the last minutes: two records in the 12:00 bucket, one in the 12:05 bucket.
    const sticky = username(subuser.name, "type-res-region-us-session-late1-sesstime-30");
    const recent = [6.5, 4, 1.5].map((ago) =>
      usageRecord(sticky, { ts: iso(t0 - ago * MINUTE), session_gen: 0, bytes_in: 5000 }),
    );
    await report(account, recent, window, 3);
    // The 12:00 bucket folds (two minutes after it ends).
    await runDurableObjectAlarm(storeOf(account));
    const noon = t0 - 7.5 * MINUTE;
    expect(await requests(account, range(noon, noon + 5 * MINUTE))).toBe(2);

    // A record of the same time of day 14 days and an hour earlier: its 5-minute bucket has the 12:00 bucket's slot.
    const history = usageRecord(username(subuser.name), { ts: iso(noon + 2 * MINUTE - FIVE_MINUTE_RING) });
    const historyHour = noon - FIVE_MINUTE_RING;
    await report(account, [history], range(historyHour, historyHour + HOUR), 1);
    expect(await requests(account, range(noon, noon + 5 * MINUTE))).toBe(2);
    expect(await requests(account, window)).toBe(4);

    // The 12:00 hour folds from its 5-minute buckets.
    vi.setSystemTime(t0 + HOUR);
    await runDurableObjectAlarm(storeOf(account));
    expect(await requests(account, window)).toBe(4);
    const hourly = await traffic(account, "residential", `${range(noon, noon + HOUR)}&group_by=hour`);
    expect(hourly.rows).toEqual([expect.objectContaining({ hour: iso(noon), requests: 3, bytes_in: 15_000 })]);
    const sessions = await traffic(account, "residential", `${range(noon, noon + HOUR)}&subuser=${subuser.id}`);
    expect(sessions.rows[0].requests).toBe(3);
  });

  it("a store woken again after its 5-minute rows aged out folds only what it never folded: an hour with late usage keeps all of it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = aheadOfTheClock();
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const hour = t0 - 20 * DAY - 7.5 * MINUTE;
    const window = (at: number) => range(at - 30 * DAY, at + MINUTE);
    await report(account, [usageRecord(username(subuser.name), { ts: iso(hour + 7 * MINUTE) })], window(t0), 1);
    await runDurableObjectAlarm(storeOf(account));

    // 25 hours later the arrival row of the first record is reused; more usage of the same hour arrives late.
    const later = t0 + 25 * HOUR;
    vi.setSystemTime(later);
    await report(account, [usageRecord(username(subuser.name), { ts: iso(hour + 12 * MINUTE) })], window(later), 2);
    // An hour on, the store forgets rows past their horizon; then it is evicted and wakes for its next fold.
    vi.setSystemTime(later + HOUR + 10 * MINUTE);
    await runDurableObjectAlarm(storeOf(account));
    await abortAllDurableObjects();
    await runDurableObjectAlarm(storeOf(account));

    const now = later + HOUR + 10 * MINUTE;
    expect(await requests(account, window(now))).toBe(2);
    const hourly = await traffic(account, "residential", `${range(hour - HOUR, hour + 2 * HOUR)}&group_by=hour`);
    expect(hourly.rows).toEqual([expect.objectContaining({ hour: iso(hour), requests: 2 })]);
    const daily = await traffic(account, "residential", `${range(hour - DAY, hour + DAY)}&group_by=day`);
    expect(daily.rows.map((row: Record<string, any>) => row.requests)).toEqual([2]);
  });
});

import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, env, gateway, json } from "../helpers/http";
import { authorize, createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, type RecordFields, reportUsage, settleUsage, traffic, usageRecord } from "../helpers/usage";

// Each test posts usage through the queue and folds the store's buckets a few times.
const SLOW = { timeout: 30_000 };

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const WEEK = 7 * 24 * HOUR;
const GB = 1e9;

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const iso = (ms: number) => new Date(ms).toISOString();
const storeOf = (account: TestAccount) => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));

/** Fake time on an hour boundary ahead of the real clock (the store's alarms run on the real one). */
function startClock(): number {
  vi.useFakeTimers({ toFake: ["Date"] });
  const t0 = Math.ceil((Date.now() + 2 * HOUR) / HOUR) * HOUR;
  vi.setSystemTime(t0);
  return t0;
}

/**
 * One record a minute by the sub-user from `from` for `minutes`, at `gbPerHour` (bytes in + out), to hosts of
 * `leaky-site.com` from one client block.
 */
function steadyUsage(subuser: TestSubuser, from: number, minutes: number, gbPerHour: number): RecordFields[] {
  return Array.from({ length: minutes }, (_, m) =>
    usageRecord(username(subuser.name), {
      ts: iso(from + m * MINUTE + 1000),
      target_host: m % 4 === 0 ? "img.leaky-site.com" : "api.leaky-site.com",
      bytes_in: Math.round((gbPerHour * GB) / 60) - 100,
      bytes_out: 100,
      client_ip: "203.0.113.9",
    }),
  );
}

/** Posts records (up to 1,000 a batch) and waits until the account's traffic counts all of them. */
async function ingest(account: TestAccount, records: RecordFields[]): Promise<void> {
  const times = records.map((r) => Date.parse(r.ts as string));
  const before = await requestsBetween(account, Math.min(...times), Math.max(...times) + MINUTE);
  for (let i = 0; i < records.length; i += 1000) {
    expect((await reportUsage(records.slice(i, i + 1000))).status).toBe(202);
  }
  await eventually(
    () => requestsBetween(account, Math.min(...times), Math.max(...times) + MINUTE),
    (requests) => requests === before + records.length,
  );
}

async function requestsBetween(account: TestAccount, from: number, to: number): Promise<number> {
  const floor = (t: number) => t - (t % MINUTE);
  const body = await traffic(account, "residential", `from=${iso(floor(from))}&to=${iso(floor(to) + MINUTE)}`);
  return body.rows[0].requests;
}

/** Moves the clock, lets the account's store fold what is due, and records its spike alerts. */
async function foldAt(account: TestAccount, at: number): Promise<void> {
  vi.setSystemTime(at);
  await runDurableObjectAlarm(storeOf(account));
  await settleUsage(account);
}

async function eventsOf(account: TestAccount, type: string): Promise<Array<Record<string, any>>> {
  const response = await call("GET", `/v1/events?type=${type}`, { token: account.token });
  expect(response.status).toBe(200);
  return (await json(response)).data;
}

async function spikes(account: TestAccount, query = ""): Promise<Array<Record<string, any>>> {
  const response = await call("GET", `/v1/traffic-spikes${query}`, { token: account.token });
  expect(response.status).toBe(200);
  return (await json(response)).data;
}

/** The one spike the list holds. */
async function onlySpike(account: TestAccount, query = ""): Promise<Record<string, any>> {
  const list = await spikes(account, query);
  expect(list).toHaveLength(1);
  return list[0] as Record<string, any>;
}

const acknowledge = (account: TestAccount, id: string, body?: Record<string, unknown>) =>
  call("POST", `/v1/traffic-spikes/${id}/acknowledge`, { token: account.token, body });

/**
 * New sub-users' 20-minute leak at `gbPerHour` (60 by default: a sub-user with no history opens an episode over
 * 50 GB/h at medium), folded 7 minutes after it ends.
 */
async function leak(account: TestAccount, subuser: TestSubuser | TestSubuser[], t0: number, gbPerHour = 60) {
  vi.setSystemTime(t0 + 20 * MINUTE);
  const leaking = Array.isArray(subuser) ? subuser : [subuser];
  await ingest(
    account,
    leaking.flatMap((one) => steadyUsage(one, t0, 20, gbPerHour)),
  );
  await foldAt(account, t0 + 27 * MINUTE);
}

describe("subuser.traffic_spike", () => {
  it(
    "an episode raises exactly one event naming its observed rate, baseline, top domains and sources; its end is recorded once",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 1000 });
      const subuser = await createSubuser(account);
      expect(subuser).toMatchObject({ spike_sensitivity: "medium", spike_action: "none" });
      await leak(account, subuser, t0);
      // More of the same episode, folded twice more: still one event. (Its bucket from minute 20 was judged empty
      // at the first fold: usage arriving later counts in traffic, not in the episode.)
      vi.setSystemTime(t0 + 35 * MINUTE);
      await ingest(account, steadyUsage(subuser, t0 + 25 * MINUTE, 10, 60));
      await foldAt(account, t0 + 37 * MINUTE);
      await foldAt(account, t0 + 42 * MINUTE);

      const started = await eventsOf(account, "subuser.traffic_spike");
      expect(started).toHaveLength(1);
      const data = started[0]?.data;
      // Its first 5 and 10 minutes leave the trailing 15 minutes at 20 and 40 GB/h, under a new sub-user's 50.
      expect(data).toMatchObject({
        subuser: subuser.id,
        sensitivity: "medium",
        started_at: iso(t0 + 10 * MINUTE),
        baseline: { gb_per_hour: 0, requests_per_hour: 0, weeks: 0, days: 0 },
        top_domains: [{ domain: "leaky-site.com", share: 1 }],
        top_sources: [{ block: "203.0.113.0/24" }],
        action: "none",
      });
      expect(data.observed.gb_per_hour).toBeGreaterThan(50);
      expect(data.observed.gb_per_hour).toBeLessThanOrEqual(60.01);
      expect(await eventsOf(account, "subuser.traffic_spike_ended")).toHaveLength(0);
      expect((await spikes(account, "?active=true")).map((s) => [s.id, s.status])).toEqual([[data.spike, "open"]]);

      // Quiet for 30 minutes and more: the episode ends, once.
      await foldAt(account, t0 + 90 * MINUTE);
      await foldAt(account, t0 + 100 * MINUTE);
      const ended = await eventsOf(account, "subuser.traffic_spike_ended");
      expect(ended).toHaveLength(1);
      expect(ended[0]?.data).toMatchObject({ spike: data.spike, subuser: subuser.id, started_at: data.started_at });
      // The usage of its steps as they were judged (the trailing 15 minutes it opened with, and those after).
      expect(ended[0]?.data.gb).toBeCloseTo(25, 0);
      expect(ended[0]?.data.peak.gb_per_hour).toBeGreaterThanOrEqual(data.observed.gb_per_hour);
      const listed = await onlySpike(account, `?subuser=${subuser.id}`);
      expect(listed).toMatchObject({ id: data.spike, status: "ended", action: "none", action_pending: false });
      expect(listed.end).toEqual(ended[0]?.data);
      expect(await spikes(account, "?active=true")).toEqual([]);
      expect(await eventsOf(account, "subuser.traffic_spike")).toHaveLength(1);
    },
  );

  it(
    "off raises nothing; sensitivity moves the threshold; a new sub-user is judged against the first floor",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 1000 });
      const off = await createSubuser(account, { spike_sensitivity: "off" });
      const high = await createSubuser(account, { spike_sensitivity: "high" });
      const low = await createSubuser(account, { spike_sensitivity: "low" });
      const mediumUnderFloor = await createSubuser(account);
      vi.setSystemTime(t0 + 20 * MINUTE);
      await ingest(account, [
        ...steadyUsage(off, t0, 20, 150),
        // 30 GB/h: over high's first floor (20 GB/h), under low's (100 GB/h).
        ...steadyUsage(high, t0, 20, 30),
        ...steadyUsage(low, t0, 20, 30),
        // 40 GB/h: under medium's (50 GB/h).
        ...steadyUsage(mediumUnderFloor, t0, 20, 40),
      ]);
      await foldAt(account, t0 + 27 * MINUTE);
      const events = await eventsOf(account, "subuser.traffic_spike");
      expect(events.map((event) => event.data.subuser)).toEqual([high.id]);

      // Turned off mid-episode: the episode ends, and nothing more is raised.
      const patched = await call("PATCH", `/v1/subusers/${high.id}`, {
        token: account.token,
        body: { spike_sensitivity: "off" },
      });
      expect((await json(patched)).spike_sensitivity).toBe("off");
      await foldAt(account, t0 + 32 * MINUTE);
      expect(await eventsOf(account, "subuser.traffic_spike_ended")).toHaveLength(1);
      expect(await spikes(account, "?active=true")).toEqual([]);
    },
  );

  it(
    "a sub-user's own baseline: the same hour of last week's traffic raises nothing, where a new sub-user's would",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 5000 });
      const regular = await createSubuser(account);
      const newcomer = await createSubuser(account);
      // Last week, the same hours ±1: 60 GB/h.
      await ingest(account, steadyUsage(regular, t0 - WEEK - HOUR, 180, 60));
      vi.setSystemTime(t0 + 20 * MINUTE);
      await ingest(account, [...steadyUsage(regular, t0, 20, 60), ...steadyUsage(newcomer, t0, 20, 60)]);
      await foldAt(account, t0 + 27 * MINUTE);
      expect((await eventsOf(account, "subuser.traffic_spike")).map((event) => event.data.subuser)).toEqual([
        newcomer.id,
      ]);
    },
  );

  it("the disable action disables the sub-user at the gateway until the episode is acknowledged", SLOW, async () => {
    const t0 = startClock();
    const account = await createAccount({ bandwidthGb: 1000 });
    const subuser = await createSubuser(account, { spike_action: "disable" });
    await leak(account, subuser, t0);
    const spike = await onlySpike(account, "?active=true");
    expect(spike).toMatchObject({ action: "disable", action_pending: true, acknowledged_at: null });
    expect(spike.start.action).toBe("disable");
    const disabled = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
    expect(disabled.status).toBe("disabled");
    expect(await authorize({ username: username(subuser.name), password: subuser.password })).toMatchObject({
      allow: false,
    });

    const acknowledged = await acknowledge(account, spike.id);
    expect(acknowledged.status).toBe(200);
    expect(await json(acknowledged)).toMatchObject({ id: spike.id, action_pending: false });
    const active = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
    expect(active.status).toBe("active");
    expect((await authorize({ username: username(subuser.name), password: subuser.password })).allow).toBe(true);
    // The start handed out again (a redelivery) does not disable it again once acknowledged.
    await foldAt(account, t0 + 32 * MINUTE);
    expect((await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }))).status).toBe(
      "active",
    );
    expect((await acknowledge(account, spike.id)).status).toBe(200);
  });

  it("the cap action caps the sub-user's requests per second at its baseline until acknowledged", SLOW, async () => {
    const t0 = startClock();
    const account = await createAccount({ bandwidthGb: 1000 });
    const subuser = await createSubuser(account, { rps_max: 40, spike_action: "cap" });
    const limits = async () =>
      (await json(await gateway("/subusers", { node: "node-1", names: [subuser.name] }))).subusers[0].limits
        .residential;
    expect((await limits()).rps).toBe(40);
    await leak(account, subuser, t0);
    const spike = await onlySpike(account, "?active=true");
    // A new sub-user's baseline is the medium floor: 40,000 requests an hour, 12 a second.
    expect(spike.start).toMatchObject({ action: "cap", cap_rps: 12 });
    expect((await limits()).rps).toBe(12);
    expect((await acknowledge(account, spike.id)).status).toBe(200);
    expect((await limits()).rps).toBe(40);
  });

  it("another account's spike answers 404 like a missing one; so does its sub-user as a filter", SLOW, async () => {
    const t0 = startClock();
    const account = await createAccount({ bandwidthGb: 1000 });
    const other = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    await leak(account, subuser, t0);
    const spike = await onlySpike(account);
    const foreign = await acknowledge(other, spike.id);
    const missing = await acknowledge(other, "spk_01JZZZZZZZZZZZZZZZZZZZZZZZ");
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    const [a, b] = [await json(foreign), await json(missing)];
    expect(a.code).toBe("traffic_spike_not_found");
    expect({ ...a, request_id: "" }).toEqual({ ...b, request_id: "" });
    expect(await spikes(other)).toEqual([]);
    const filtered = await call("GET", `/v1/traffic-spikes?subuser=${subuser.id}`, { token: other.token });
    expect(filtered.status).toBe(404);
    expect((await json(filtered)).code).toBe("subuser_not_found");
  });
});

describe("acknowledging an episode undoes only the action it took itself", () => {
  const statusOf = async (account: TestAccount, subuser: TestSubuser) =>
    (await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }))).status;
  const setStatus = async (account: TestAccount, subuser: TestSubuser, status: string) =>
    expect((await call("PATCH", `/v1/subusers/${subuser.id}`, { token: account.token, body: { status } })).status).toBe(
      200,
    );
  const passes = async (subuser: TestSubuser) =>
    (await authorize({ username: username(subuser.name), password: subuser.password })).allow;

  /** A new account's sub-user with `spike_action: disable`, the fake clock started. */
  async function disablingSubuser() {
    const t0 = startClock();
    const account = await createAccount({ bandwidthGb: 1000 });
    return { t0, account, subuser: await createSubuser(account, { spike_action: "disable" }) };
  }

  /** Acknowledges the episode (200); the sub-user's status then, and whether the gateway lets it through. */
  async function acknowledged(account: TestAccount, subuser: TestSubuser, spikeId: string) {
    expect((await acknowledge(account, spikeId)).status).toBe(200);
    return { status: await statusOf(account, subuser), passes: await passes(subuser) };
  }

  it("a sub-user the customer disabled before the episode stays disabled after acknowledgement", SLOW, async () => {
    const { t0, account, subuser } = await disablingSubuser();
    await setStatus(account, subuser, "disabled");
    await leak(account, subuser, t0);
    const spike = await onlySpike(account);
    expect(await acknowledged(account, subuser, spike.id)).toEqual({ status: "disabled", passes: false });
  });

  it(
    "a sub-user the customer disabled while the episode held it stays disabled after acknowledgement",
    SLOW,
    async () => {
      const { t0, account, subuser } = await disablingSubuser();
      await leak(account, subuser, t0);
      const spike = await onlySpike(account, "?active=true");
      expect(spike.status).toBe("open");
      // The leaked password's owner disables it themselves while the alert is open.
      await setStatus(account, subuser, "disabled");
      expect(await acknowledged(account, subuser, spike.id)).toEqual({ status: "disabled", passes: false });
    },
  );

  it(
    "a sub-user the customer disabled after the episode ended stays disabled after acknowledgement",
    SLOW,
    async () => {
      const { t0, account, subuser } = await disablingSubuser();
      await leak(account, subuser, t0);
      await foldAt(account, t0 + 90 * MINUTE);
      await foldAt(account, t0 + 100 * MINUTE);
      const spike = await onlySpike(account);
      expect(spike).toMatchObject({ status: "ended", action_pending: true });
      await setStatus(account, subuser, "disabled");
      expect(await acknowledged(account, subuser, spike.id)).toEqual({ status: "disabled", passes: false });
    },
  );

  it("a sub-user the customer re-enabled stays as they set it; the episode's own disable is lifted", SLOW, async () => {
    const { t0, account, subuser: reenabled } = await disablingSubuser();
    await leak(account, reenabled, t0);
    const spike = await onlySpike(account, "?active=true");
    await setStatus(account, reenabled, "active");
    expect(await acknowledged(account, reenabled, spike.id)).toEqual({ status: "active", passes: true });
  });

  it(
    "acknowledging needs the sub-user's product scope, even when the episode is already acknowledged",
    SLOW,
    async () => {
      const { t0, account, subuser } = await disablingSubuser();
      await leak(account, subuser, t0);
      const spike = await onlySpike(account);
      const isp = await issueKey(account.id, ["isp"]);
      const before = await acknowledge({ ...account, token: isp.token }, spike.id);
      expect(before.status).toBe(403);
      expect((await json(before)).code).toBe("subuser_scope_mismatch");
      expect((await acknowledge(account, spike.id)).status).toBe(200);
      const after = await acknowledge({ ...account, token: isp.token }, spike.id);
      expect(after.status).toBe(403);
      const body = await json(after);
      expect(body.code).toBe("subuser_scope_mismatch");
      expect(body).not.toHaveProperty("id");
    },
  );
});

describe("subuser.traffic_spike: one notification per account per window", () => {
  it(
    "rule: episodes of several sub-users that start together are one event listing them all, under one digest",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 2000 });
      const leaking = [await createSubuser(account), await createSubuser(account), await createSubuser(account)];
      await leak(account, leaking, t0);

      const events = await eventsOf(account, "subuser.traffic_spike");
      expect(events).toHaveLength(1);
      const data = events[0]?.data;
      expect(data.episode_count).toBe(3);
      expect(data.episodes.map((e: Record<string, unknown>) => e.subuser).sort()).toEqual(
        leaking.map((s) => s.id).sort(),
      );
      // The top-level figures are the first episode's, as one episode's event always carried them.
      expect(data).toMatchObject({ spike: data.episodes[0].spike, subuser: data.episodes[0].subuser });
      const listed = await spikes(account);
      expect(listed).toHaveLength(3);
      expect(new Set(listed.map((s) => s.digest))).toEqual(new Set([data.digest]));
      expect((await spikes(account, `?digest=${data.digest}`)).map((s) => s.id).sort()).toEqual(
        data.episodes.map((e: Record<string, unknown>) => e.spike).sort(),
      );
    },
  );

  it(
    "rule: an episode within an hour of the account's last notification is listed and acted on at once, announced at the hour's end",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 2000 });
      const first = await createSubuser(account);
      const second = await createSubuser(account, { spike_action: "disable" });
      await leak(account, first, t0);
      const [announced] = await eventsOf(account, "subuser.traffic_spike");
      expect(announced?.data.episode_count).toBe(1);

      // 30 minutes later, another sub-user: its episode and its action now, its notification later.
      await leak(account, second, t0 + 30 * MINUTE);
      const waiting = await onlySpike(account, `?subuser=${second.id}`);
      expect(waiting.action_pending).toBe(true);
      expect((await json(await call("GET", `/v1/subusers/${second.id}`, { token: account.token }))).status).toBe(
        "disabled",
      );
      expect(await eventsOf(account, "subuser.traffic_spike")).toHaveLength(1);
      // The job before the hour's end announces nothing; at its end, the waiting episode.
      const notifiedAt = Date.parse(announced?.created_at);
      vi.setSystemTime(notifiedAt + HOUR - MINUTE);
      await runCron(notifiedAt + HOUR - MINUTE);
      expect(await eventsOf(account, "subuser.traffic_spike")).toHaveLength(1);
      vi.setSystemTime(notifiedAt + HOUR);
      await runCron(notifiedAt + HOUR);
      const events = await eventsOf(account, "subuser.traffic_spike");
      expect(events).toHaveLength(2);
      const later = events.find((event) => event.data.digest !== announced?.data.digest);
      expect(later?.data).toMatchObject({ spike: waiting.id, subuser: second.id, episode_count: 1 });
      expect(later?.data.digest).toBe(waiting.digest);
      // Run again: nothing more.
      await runCron(notifiedAt + HOUR + MINUTE);
      expect(await eventsOf(account, "subuser.traffic_spike")).toHaveLength(2);
    },
  );
});

describe("acknowledging a spike as normal", () => {
  it(
    "rule: `normal: true` teaches the sub-user's baseline the episode's peak, so the same level raises nothing; `false` undoes it",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 5000 });
      const subuser = await createSubuser(account);
      await leak(account, subuser, t0);
      const spike = await onlySpike(account);
      expect(spike.taught).toBeNull();

      const taught = await acknowledge(account, spike.id, { normal: true });
      expect(taught.status).toBe(200);
      const lesson = (await json(taught)).taught;
      expect(lesson.gb_per_hour).toBeCloseTo(spike.start.observed.gb_per_hour, 1);
      expect(Date.parse(lesson.until)).toBe(Date.now() + 28 * 24 * HOUR);
      expect((await onlySpike(account)).taught).toEqual(lesson);

      // Three hours later, the same level again: no episode.
      await leak(account, subuser, t0 + 3 * HOUR);
      expect(await spikes(account)).toHaveLength(1);

      // Undone: the same level opens an episode again.
      const undone = await acknowledge(account, spike.id, { normal: false });
      expect(undone.status).toBe(200);
      expect((await json(undone)).taught).toBeNull();
      await leak(account, subuser, t0 + 6 * HOUR);
      expect(await spikes(account)).toHaveLength(2);
    },
  );

  it(
    "rule: a lesson is bounded (at most 100 GB an hour) and one per sub-user: a new one replaces the earlier, whose undo then changes nothing",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 20_000 });
      const subuser = await createSubuser(account);
      await leak(account, subuser, t0, 300);
      const [big] = await spikes(account);
      const lesson = (await json(await acknowledge(account, big?.id, { normal: true }))).taught;
      expect(lesson.gb_per_hour).toBe(100);

      // Idle before it, the sub-user must pass 4 × the taught 100 GB/h, and 10 × to open within 20 minutes: 1,100
      // GB/h does, a new episode, taught in its turn.
      await leak(account, subuser, t0 + 3 * HOUR, 1100);
      const [newer] = await spikes(account);
      expect(newer?.id).not.toBe(big?.id);
      expect((await json(await acknowledge(account, newer?.id, { normal: true }))).taught.gb_per_hour).toBe(100);
      const byId = async () => Object.fromEntries((await spikes(account)).map((s) => [s.id, s.taught]));
      expect((await byId())[big?.id]).toBeNull();
      // Undoing the replaced lesson changes nothing: the newer one still holds.
      expect((await json(await acknowledge(account, big?.id, { normal: false }))).taught).toBeNull();
      expect((await byId())[newer?.id]).toMatchObject({ gb_per_hour: 100 });
    },
  );

  it("rule: `normal` must be a boolean; other fields are refused", SLOW, async () => {
    const t0 = startClock();
    const account = await createAccount({ bandwidthGb: 1000 });
    const subuser = await createSubuser(account);
    await leak(account, subuser, t0);
    const spike = await onlySpike(account);
    for (const body of [{ normal: "yes" }, { teach: true }]) {
      const refused = await acknowledge(account, spike.id, body);
      expect(refused.status).toBe(422);
      expect(await json(refused)).toMatchObject({ code: "invalid_request", request_id: expect.any(String) });
    }
  });
});

describe("rises and repeats, judged through the worker", () => {
  const DAY = 24 * HOUR;

  /** Usage at `gbPerHour` over the 3 hours around `hour` (its hour ±1): a window the baseline reads. */
  const around = (subuser: TestSubuser, hour: number, gbPerHour: number) =>
    steadyUsage(subuser, hour - HOUR, 180, gbPerHour);

  /**
   * Ingests `gbPerHour` from `from` for `minutes` in chunks of 20, folding each as its last bucket is due (2 minutes
   * after its end: the next chunk's first bucket is not judged before its usage arrived).
   */
  async function runFor(
    account: TestAccount,
    subusers: TestSubuser[],
    from: number,
    minutes: number,
    gbPerHour: number,
  ) {
    for (let at = from; at < from + minutes * MINUTE; at += 20 * MINUTE) {
      vi.setSystemTime(at + 20 * MINUTE);
      await ingest(
        account,
        subusers.flatMap((subuser) => steadyUsage(subuser, at, 20, gbPerHour)),
      );
      await foldAt(account, at + 22 * MINUTE);
    }
  }

  it(
    "rule: previous clock hour: a daily job an hour into its run is judged against its first hour, which its rise does not pull up; a leak on top of it opens",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 5000 });
      const job = await createSubuser(account);
      // Its usual: 10 GB/h in these hours last week. The hour before t0 it is all but idle (0.5 GB/h: a daily job
      // not started yet), its running average too.
      await ingest(account, [...around(job, t0 - WEEK, 10), ...around(job, t0 - WEEK + HOUR, 10)].filter(unique()));
      await runFor(account, [job], t0 - HOUR, 60, 0.5);
      // The job runs at 22 GB/h for its first clock hour: held back as a job starting (under 4 × its baseline) while
      // its running average catches up, judged against its previous clock hour (0.5 GB/h), a fixed figure the rise
      // does not pull up; then at 30 GB/h for 40 minutes, judged against its first hour (22 GB/h): under 1.5 × it.
      await runFor(account, [job], t0, 60, 22);
      await runFor(account, [job], t0 + HOUR, 40, 30);
      expect(await spikes(account)).toEqual([]);
      // A leak on top of it, 60 GB/h (over 1.5 × its previous clock hour): an episode.
      await runFor(account, [job], t0 + 100 * MINUTE, 40, 60);
      const spike = await onlySpike(account, `?subuser=${job.id}`);
      expect(Date.parse(spike.start.started_at)).toBeGreaterThanOrEqual(t0 + 100 * MINUTE);
      expect(spike.start.baseline.weeks).toBe(1);
      expect(spike.start.baseline.gb_per_hour).toBeCloseTo(10, 3);
    },
  );

  it(
    "rule: yesterday's surge: a rise that repeats yesterday's surge at this hour must pass 2 × yesterday's level; the same rise after a usual day opens",
    SLOW,
    async () => {
      const t0 = startClock();
      const account = await createAccount({ bandwidthGb: 5000 });
      const repeating = await createSubuser(account);
      const usual = await createSubuser(account);
      // Both: 10 GB/h in these hours over the past 2 weeks, for today's baseline and yesterday's.
      const history = [repeating, usual].flatMap((subuser) =>
        [t0 - WEEK, t0 - 2 * WEEK, t0 - DAY - WEEK, t0 - DAY - 2 * WEEK].flatMap((hour) => around(subuser, hour, 10)),
      );
      await ingest(account, history);
      // Yesterday, `repeating` surged at this hour: 30 GB/h, over 1.5 × yesterday's baseline (10).
      await ingest(account, around(repeating, t0 - DAY, 30));
      // Today both rise to 45 GB/h for 40 minutes: over 2 × and 4 × the baseline (idle before), under 2 × 30.
      await runFor(account, [repeating, usual], t0, 40, 45);
      const [spike, ...others] = await spikes(account);
      expect(others).toEqual([]);
      expect(spike?.subuser).toBe(usual.id);
      expect(spike?.start.baseline.weeks).toBe(2);
      expect(spike?.start.baseline.gb_per_hour).toBeCloseTo(10, 3);
    },
  );
});

/** A filter keeping the first record of each minute and sub-user (windows that overlap are ingested once). */
function unique() {
  const seen = new Set<string>();
  return (record: RecordFields) => {
    const key = `${record.username}:${record.ts}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
}

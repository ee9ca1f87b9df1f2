import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { usagePartsOf } from "../../src/domain/traffic/usage-messages";
import { keepsSample } from "../../src/durable-objects/traffic-store/contract";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { orderBatch } from "../helpers/isp";
import { createSubuser, username } from "../helpers/subusers";
import { DAY, HOUR, iso, MINUTE, range, rowsAsMap, type Sums, sumBy } from "../helpers/traffic-sums";
import {
  eventually,
  holdUsageMessages,
  type RecordFields,
  raceTheFirstPost,
  reportUsage,
  sentParts,
  traffic,
  usageMessageBody,
  usageRecord,
} from "../helpers/usage";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const storeOf = (account: TestAccount) => env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));

/** Two sub-users' usage over the last three hours, in several regions, ASNs and tags, some of it failed. */
async function seedResidential() {
  const account = await createAccount({ bandwidthGb: 10 });
  const alice = await createSubuser(account);
  const bob = await createSubuser(account);
  const at = Date.now();
  const shapes: Array<[typeof alice, number, string, number, string | null, string | null]> = [
    [alice, 170 * MINUTE, "us/ca/la", 7922, "checkout", null],
    [alice, 95 * MINUTE, "de/be/berlin", 3320, "checkout", "upstream-timeout"],
    [alice, 50 * MINUTE, "us/ny/nyc", 7922, null, null],
    [bob, 120 * MINUTE, "de/be/berlin", 3320, "search", null],
    [bob, 20 * MINUTE, "us/ca/la", 701, "search", "rps-limit"],
    [bob, 5 * MINUTE, "fr/idf/paris", 3215, null, null],
  ];
  const records = shapes.flatMap(([owner, ago, geo, asn, tag, error], index) =>
    Array.from({ length: index + 1 }, (_, n) =>
      usageRecord(username(owner.name), {
        ts: iso(at - ago + n * 1000),
        exit_geo: geo,
        exit_asn: asn,
        tag,
        error_code: error,
        status: error ? 502 : 200,
        bytes_in: 1000 * (index + 1) + n,
        bytes_out: 10 * (index + 1),
      }),
    ),
  );
  const owners = new Map(records.map((record, i) => [record.request_id, i < 6 ? alice.id : bob.id]));
  expect((await reportUsage(records)).status).toBe(202);
  const query = range(at - 4 * HOUR, at + MINUTE);
  await eventually(
    () => traffic(account, "residential", query),
    (body) => body.rows[0].requests === records.length,
  );
  return { account, alice, bob, records, owners, query, at };
}

describe("GET /{product}/traffic: exact sums", () => {
  it("answers one total row without group_by, and every group_by and filter sums exactly what was ingested, before and after compaction", async () => {
    const { account, alice, records, owners, query } = await seedResidential();
    const region = (r: RecordFields) => (r.exit_geo as string).split("/")[0] as string;
    const hourOf = (r: RecordFields) => iso(Date.parse(r.ts as string) - (Date.parse(r.ts as string) % HOUR));
    const dayOf = (r: RecordFields) => (r.ts as string).slice(0, 10);
    const cases: Array<[string, string, (r: RecordFields) => string | number | null]> = [
      ["subuser", "subuser", (r) => owners.get(r.request_id as string) as string],
      ["region", "region", region],
      ["asn", "asn", (r) => r.exit_asn as number],
      ["tag", "tag", (r) => (r.tag as string | null) ?? null],
      ["hour", "hour", hourOf],
      ["day", "day", dayOf],
    ];
    const check = async () => {
      const total = await traffic(account, "residential", query);
      expect(total.resolution).toBe("1m");
      expect(total.rows).toHaveLength(1);
      const all = sumBy(records, () => null).get(null) as Sums;
      expect(total.rows[0]).toEqual({ ...all, error_rate: all.errors / all.requests });
      for (const [groupBy, field, key] of cases) {
        const body = await traffic(account, "residential", `${query}&group_by=${groupBy}`);
        expect(rowsAsMap(body.rows, field), `group_by=${groupBy}`).toEqual(sumBy(records, key));
        for (const row of body.rows) expect(row.error_rate).toBe(row.requests ? row.errors / row.requests : 0);
      }
      const byAlice = await traffic(account, "residential", `${query}&subuser=${alice.id}&group_by=region`);
      expect(rowsAsMap(byAlice.rows, "region")).toEqual(
        sumBy(
          records.filter((r) => owners.get(r.request_id as string) === alice.id),
          region,
        ),
      );
      const german = await traffic(account, "residential", `${query}&region=DE&group_by=subuser`);
      expect(rowsAsMap(german.rows, "subuser")).toEqual(
        sumBy(
          records.filter((r) => region(r) === "de"),
          (r) => owners.get(r.request_id as string) as string,
        ),
      );
      const search = await traffic(account, "residential", `${query}&tag=search&group_by=hour`);
      expect(rowsAsMap(search.rows, "hour")).toEqual(
        sumBy(
          records.filter((r) => r.tag === "search"),
          hourOf,
        ),
      );
    };
    await check();
    await runDurableObjectAlarm(storeOf(account));
    await check();
  });

  it("counts nothing for another product, and a sub-range counts only its own minutes (to is exclusive)", async () => {
    const { account, records, at } = await seedResidential();
    expect((await traffic(account, "mobile", range(at - 4 * HOUR, at + MINUTE))).rows[0].requests).toBe(0);
    const from = at - 60 * MINUTE;
    const to = at - 10 * MINUTE;
    const body = await traffic(account, "residential", range(from - (from % MINUTE), to - (to % MINUTE)));
    const inside = records.filter((r) => {
      const ts = Date.parse(r.ts as string);
      return ts >= from - (from % MINUTE) && ts < to - (to % MINUTE);
    });
    expect(body.rows[0].requests).toBe(inside.length);
    expect(body.rows[0].bytes_in).toBe(inside.reduce((sum, r) => sum + (r.bytes_in as number), 0));
  });

  it("groups ISP traffic per IP addressed, and mobile traffic per ASN with its carrier_name", async () => {
    const account = await createAccount({ bandwidthGb: 10, balance_usd: 1000 });
    const batch = await orderBatch(account, { quantity: 5 }, Date.now() + 10 * 60_000);
    const ispRecords = ["192.0.2.10", "192.0.2.10", "192.0.2.11"].map((ip, i) =>
      usageRecord(`${env.GATEWAY_USER_PREFIX}_${batch.subuser.name}`, {
        product: "isp",
        dest_ip: ip,
        bytes_in: 100 * (i + 1),
      }),
    );
    const phone = await createSubuser(account, { products: ["mobile"] });
    const mobileRecords = [
      [310260, "T-Mobile US"],
      [310260, "T-Mobile US"],
      [311480, "Verizon"],
    ].map(([asn, carrier]) =>
      usageRecord(username(phone.name, "type-mob-region-us"), {
        product: "mobile",
        exit_asn: asn,
        carrier_name: carrier,
      }),
    );
    expect((await reportUsage([...ispRecords, ...mobileRecords])).status).toBe(202);
    const query = range(Date.now() - HOUR, Date.now() + MINUTE);
    const byIp = await eventually(
      () => traffic(account, "isp", `${query}&group_by=ip`),
      (body) => body.rows.length === 2,
    );
    expect(rowsAsMap(byIp.rows, "ip")).toEqual(sumBy(ispRecords, (r) => r.dest_ip as string));
    const byAsn = await eventually(
      () => traffic(account, "mobile", `${query}&group_by=asn`),
      (body) => body.rows.length === 2,
    );
    expect(byAsn.rows.map((row: Record<string, any>) => [row.asn, row.carrier_name, row.requests])).toEqual([
      [310260, "T-Mobile US", 2],
      [311480, "Verizon", 1],
    ]);
  });
});

describe("GET /{product}/traffic: resolution by age", () => {
  it("answers at 1 minute under 24 h, 5 minutes to 14 days, 1 hour to 90 days and 1 day beyond, with the same totals after each compaction", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 5, 10, 12, 7, 30);
    vi.setSystemTime(t0);
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const records = [0, 3, 9, 61, 125].map((minutes) =>
      usageRecord(username(subuser.name), { ts: iso(t0 - minutes * MINUTE), bytes_in: 1000 + minutes }),
    );
    expect((await reportUsage(records)).status).toBe(202);
    const query = range(t0 - 3 * HOUR, t0 + HOUR);
    await eventually(
      () => traffic(account, "residential", query),
      (body) => body.rows[0].requests === records.length,
    );
    const total = sumBy(records, () => null).get(null) as Sums;
    const expectAt = async (moveTo: number, resolution: string, unit: number) => {
      vi.setSystemTime(moveTo);
      await runDurableObjectAlarm(storeOf(account));
      const body = await traffic(account, "residential", query);
      expect(body.resolution).toBe(resolution);
      expect(Date.parse(body.from) % unit).toBe(0);
      expect(Date.parse(body.to) % unit).toBe(0);
      expect(body.rows[0]).toMatchObject(total);
      const hourly = await traffic(account, "residential", `${query}&group_by=hour`);
      expect(hourly.rows.reduce((sum: number, row: Sums) => sum + row.requests, 0)).toBe(records.length);
      const filtered = await traffic(account, "residential", `${query}&subuser=${subuser.id}`);
      expect(filtered.rows[0]).toMatchObject(total);
      return hourly;
    };
    await expectAt(t0 + MINUTE, "1m", MINUTE);
    await expectAt(t0 + 2 * DAY, "5m", 5 * MINUTE);
    await expectAt(t0 + 20 * DAY, "1h", HOUR);
    const daily = await expectAt(t0 + 100 * DAY, "1d", DAY);
    // Beyond 90 days only days exist: hour groups are whole days.
    expect(daily.rows.map((row: Record<string, any>) => row.hour)).toEqual([iso(t0 - (t0 % DAY))]);
  });
});

describe("GET /{product}/traffic: validation and access", () => {
  it("rejects ranges over 90 days (range_too_wide), unknown groups and ip outside isp (invalid_group_by), and from ≥ to", async () => {
    const account = await createAccount();
    const get = (product: string, query: string) =>
      call("GET", `/v1/${product}/traffic?${query}`, { token: account.token });
    const wide = await get("residential", "from=2026-01-01&to=2026-04-02");
    expect(wide.status).toBe(422);
    expect((await json(wide)).code).toBe("range_too_wide");
    expect((await get("residential", "from=2026-01-01&to=2026-03-31")).status).toBe(200);
    for (const [product, group] of [
      ["residential", "week"],
      ["residential", "ip"],
      ["mobile", "ip"],
    ]) {
      const response = await get(product as string, `from=2026-01-01&to=2026-01-02&group_by=${group}`);
      expect(response.status, `${product} group_by=${group}`).toBe(422);
      expect((await json(response)).code).toBe("invalid_group_by");
    }
    expect((await get("isp", "from=2026-01-01&to=2026-01-02&group_by=ip")).status).toBe(200);
    for (const query of ["from=2026-01-02&to=2026-01-02", "to=2026-01-02", "from=yesterday&to=2026-01-02"]) {
      const response = await get("residential", query);
      expect(response.status, query).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
  });

  it("answers another account's sub-user as not found, and a product outside the key's scope with 403", async () => {
    const account = await createAccount();
    const other = await createAccount();
    const foreign = await createSubuser(other);
    const query = "from=2026-01-01&to=2026-01-02";
    const filtered = [
      `/v1/residential/traffic?${query}&subuser=`,
      "/v1/residential/requests?subuser=",
      "/v1/residential/sessions?subuser=",
    ];
    for (const path of filtered) {
      const response = await call("GET", `${path}${foreign.id}`, { token: account.token });
      expect(response.status, path).toBe(404);
      expect((await json(response)).code).toBe("subuser_not_found");
    }
    const residentialKey = await issueKey(account.id, ["residential"]);
    for (const path of [`/v1/mobile/traffic?${query}`, "/v1/isp/requests"]) {
      const response = await call("GET", path, { token: residentialKey.token });
      expect(response.status, path).toBe(403);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    }
    expect((await call("GET", `/v1/residential/traffic?${query}`, { token: residentialKey.token })).status).toBe(200);
    // A key covering the product reads that product's resources of a sub-user that also has another product.
    const both = await createSubuser(account, { products: ["residential", "mobile"] });
    for (const path of filtered) {
      const response = await call("GET", `${path}${both.id}`, { token: residentialKey.token });
      expect(response.status, path).toBe(200);
    }
  });
});

describe("GET /{product}/requests: the sampled request log", () => {
  it("logs every request of an account under 100 a minute, newest first, with the entry fields, filtered by sub-user", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const alice = await createSubuser(account);
    const bob = await createSubuser(account);
    const at = Date.now();
    const records = Array.from({ length: 30 }, (_, i) =>
      usageRecord(username((i % 2 ? bob : alice).name), {
        ts: iso(at - (30 - i) * 1000),
        tag: i % 3 === 0 ? "t1" : null,
      }),
    );
    expect((await reportUsage(records)).status).toBe(202);
    const list = async (query = "") =>
      json(await call("GET", `/v1/residential/requests${query}`, { token: account.token }));
    const body = await eventually(list, (b) => b.data.length === 30);
    expect(body.data.map((entry: Record<string, any>) => entry.request_id)).toEqual(
      records.map((r) => r.request_id).reverse(),
    );
    const newest = records[29] as RecordFields;
    expect(body.data[0]).toEqual({
      request_id: newest.request_id,
      ts: newest.ts,
      subuser: bob.id,
      method: newest.method,
      target_host: newest.target_host,
      status: newest.status,
      bytes: (newest.bytes_in as number) + (newest.bytes_out as number),
      exit_ip: newest.exit_ip,
      exit_geo: newest.exit_geo,
      exit_asn: newest.exit_asn,
      tag: newest.tag,
    });
    const alices = await list(`?subuser=${alice.id}&limit=5`);
    expect(alices.data).toHaveLength(5);
    expect(alices.data.every((entry: Record<string, any>) => entry.subuser === alice.id)).toBe(true);
    const tooMany = await call("GET", "/v1/residential/requests?limit=1001", { token: account.token });
    expect(tooMany.status).toBe(422);
  });

  it("samples an account above 100 requests a minute uniformly, keeps at most 1,000 per product and none older than 48 hours", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const at = Date.now();
    const minuteStart = at - (at % MINUTE) - 10 * MINUTE;
    // 1,000 requests inside one minute: about 100 of them are logged.
    const burst = Array.from({ length: 1000 }, (_, i) =>
      usageRecord(username(subuser.name), { ts: iso(minuteStart + i * 50) }),
    );
    expect((await reportUsage(burst)).status).toBe(202);
    const list = async () => json(await call("GET", "/v1/residential/requests?limit=1000", { token: account.token }));
    await eventually(
      () => traffic(account, "residential", range(at - HOUR, at + MINUTE)),
      (b) => b.rows[0].requests === 1000,
    );
    const sampled = (await list()).data.length;
    expect(sampled).toBeGreaterThanOrEqual(50);
    expect(sampled).toBeLessThanOrEqual(200);
    // Old records count in traffic but never enter the log.
    const old = Array.from({ length: 5 }, () => usageRecord(username(subuser.name), { ts: iso(at - 49 * HOUR) }));
    expect((await reportUsage(old)).status).toBe(202);
    // Twelve quiet minutes of 99 requests each: every one is logged, and only the newest 1,000 stay.
    const quiet = Array.from({ length: 12 * 99 }, (_, i) =>
      usageRecord(username(subuser.name), {
        ts: iso(at - 40 * MINUTE - 30 * MINUTE + Math.floor(i / 99) * MINUTE + (i % 99) * 100),
      }),
    );
    expect((await reportUsage(quiet.slice(0, 600))).status).toBe(202);
    expect((await reportUsage(quiet.slice(600))).status).toBe(202);
    const logged = await eventually(list, (b) => b.data.length === 1000);
    const ids = new Set(logged.data.map((entry: Record<string, any>) => entry.request_id));
    expect(old.some((r) => ids.has(r.request_id))).toBe(false);
    expect(logged.data.every((entry: Record<string, any>) => Date.parse(entry.ts) > Date.now() - 48 * HOUR)).toBe(true);
    const timestamps = logged.data.map((entry: Record<string, any>) => Date.parse(entry.ts));
    expect([...timestamps].sort((a, b) => b - a)).toEqual(timestamps);
  });

  it("sends candidates that depend on the batch alone (a retry sends the very same parts), and the store keeps those its own rate samples", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const at = Date.now();
    const minuteStart = at - (at % MINUTE) - 10 * MINUTE;
    const recordsIn = (count: number) =>
      Array.from({ length: count }, (_, i) => usageRecord(username(subuser.name), { ts: iso(minuteStart + i * 50) }));
    expect((await reportUsage(recordsIn(1000))).status).toBe(202);
    await eventually(
      () => traffic(account, "residential", range(minuteStart, minuteStart + MINUTE)),
      (b) => b.rows[0].requests === 1000,
    );
    const logBefore = await json(await call("GET", "/v1/residential/requests?limit=1000", { token: account.token }));

    // 200 more in that minute: 100 candidates standing for 2 requests each, whatever the store has counted.
    const { sent, deliver } = holdUsageMessages();
    const more = recordsIn(200);
    const batchId = crypto.randomUUID();
    expect((await reportUsage(more, batchId)).status).toBe(202);
    const firstCopy = sent.map((message) => message.body);
    // A copy racing the first post (it recalled the batch before the first recorded it) sends its parts again.
    raceTheFirstPost();
    expect((await reportUsage(more, batchId)).status).toBe(202);
    expect(await sentParts(sent.slice(firstCopy.length))).toEqual(await sentParts(sent.slice(0, firstCopy.length)));
    const bodies = await Promise.all(firstCopy.map(usageMessageBody));
    const samples = bodies.flatMap((body) => usagePartsOf(body).flatMap((p) => p.samples));
    expect(samples).toHaveLength(100);
    expect(samples.every((sample) => sample.weight === 2)).toBe(true);
    expect((await deliver()).retryMessages).toHaveLength(0);
    // The store keeps those of them it samples at its own rate, 1,200.
    const logged = await json(await call("GET", "/v1/residential/requests?limit=1000", { token: account.token }));
    const newIds = new Set(more.map((record) => record.request_id));
    const loggedNow = logged.data.filter((entry: Record<string, any>) => newIds.has(entry.request_id));
    expect(loggedNow.map((entry: Record<string, any>) => entry.request_id).sort()).toEqual(
      samples
        .filter((sample) => keepsSample(sample, 1200))
        .map((sample) => sample.requestId)
        .sort(),
    );
    expect(loggedNow.length).toBeGreaterThan(5);
    expect(loggedNow.length).toBeLessThan(40);
    // The first 1,000's entries (candidates standing for 10 requests each) are thinned to the minute's 1,200.
    const stillLogged = logBefore.data.filter((entry: Record<string, any>) =>
      keepsSample({ requestId: entry.request_id, weight: 10 }, 1200),
    );
    expect(stillLogged.length).toBeLessThan(logBefore.data.length);
    expect(logged.data.length).toBe(stillLogged.length + loggedNow.length);
  });

  it("samples each minute at its own count: a busy minute's first requests are thinned as it fills, a quiet minute after it logs every request, and the list shows 100 by default", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const at = Date.now();
    const busyMinute = at - (at % MINUTE) - 20 * MINUTE;
    const recordsIn = (minute: number, count: number) =>
      Array.from({ length: count }, (_, i) => usageRecord(username(subuser.name), { ts: iso(minute + i * 50) }));
    const list = async (query = "?limit=1000") =>
      json(await call("GET", `/v1/residential/requests${query}`, { token: account.token }));
    const requestsCounted = (count: number) =>
      eventually(
        () => traffic(account, "residential", range(busyMinute - HOUR, at + MINUTE)),
        (b) => b.rows[0].requests === count,
      );

    const first = recordsIn(busyMinute, 99);
    expect((await reportUsage(first)).status).toBe(202);
    await eventually(list, (b) => b.data.length === 99);
    expect((await reportUsage(recordsIn(busyMinute + 5_000, 901))).status).toBe(202);
    await requestsCounted(1000);
    const quiet = recordsIn(busyMinute + MINUTE, 60);
    expect((await reportUsage(quiet)).status).toBe(202);
    await requestsCounted(1060);

    const logged = new Set((await list()).data.map((entry: Record<string, any>) => entry.request_id));
    expect(quiet.every((record) => logged.has(record.request_id))).toBe(true);
    const firstKept = first.filter((record) => logged.has(record.request_id)).map((record) => record.request_id);
    expect(firstKept).toEqual(
      first
        .filter((record) => keepsSample({ requestId: record.request_id as string, weight: 1 }, 1000))
        .map((record) => record.request_id),
    );
    expect(firstKept.length).toBeLessThan(40);
    expect(logged.size).toBeGreaterThan(100);
    expect((await list("")).data).toHaveLength(100);
  });

  it("says in the OpenAPI description that the log is sampled and not for billing", async () => {
    const document = await json(await call("GET", "/v1/openapi.json"));
    const operation = document.paths["/{product}/requests"].get;
    expect(`${operation.summary} ${operation.description}`).toMatch(/sampled/i);
    expect(operation.description).toMatch(/not.*billing/i);
  });
});

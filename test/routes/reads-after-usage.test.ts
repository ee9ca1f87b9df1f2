import { describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, settleUsage, traffic, usageRecord } from "../helpers/usage";

const SLOW = { timeout: 60_000 };
const TB = 1_000_000_000_000;

/**
 * Every GET of the public API, each path's parameters filled with the account's own resources where it has them
 * (the sub-user that sent the traffic) and an unknown id elsewhere (a 404 is an answer; a 5xx never is).
 */
async function readEverything(account: TestAccount, subuser: TestSubuser): Promise<string[]> {
  const document = await json(await call("GET", "/v1/openapi.json"));
  const today = new Date().toISOString().slice(0, 10);
  const failures: string[] = [];
  let reads = 0;
  for (const [path, methods] of Object.entries<Record<string, unknown>>(document.paths)) {
    if (!("get" in methods) || path.endsWith("/tail")) continue;
    for (const product of path.includes("{product}") ? ["residential", "mobile", "isp"] : [""]) {
      const concrete = path
        .replace("{product}", product)
        .replace(/^\/subusers\/\{[^}]+\}/, `/subusers/${subuser.id}`)
        .replace(/\{[^}]+\}/g, "unknown_01JD2W6Q6J5E4V3N0Z9Y8X7W6V");
      const query = path.endsWith("/traffic") ? `?from=${today}&to=${new Date(Date.now() + 60_000).toISOString()}` : "";
      const response = await call("GET", `/v1${concrete}${query}`, { token: account.token });
      reads++;
      if (response.status >= 500) failures.push(`GET ${concrete} → ${response.status} ${await response.text()}`);
      else await response.arrayBuffer();
    }
  }
  expect(reads).toBeGreaterThanOrEqual(30);
  return failures;
}

/** Reports `records` and waits until the account's traffic shows them. */
async function send(account: TestAccount, records: Record<string, unknown>[]) {
  const response = await reportUsage(records);
  expect(response.status).toBe(202);
  expect((await json(response)).accepted).toBe(records.length);
  await eventually(
    () => subuserRequests(account),
    (requests) => requests >= records.length,
  );
  await settleUsage(account);
}

async function subuserRequests(account: TestAccount): Promise<number> {
  const to = new Date(Date.now() + 60_000).toISOString();
  const from = new Date(Date.now() - 89 * 86_400_000).toISOString();
  const body = await traffic(account, "residential", `from=${from}&to=${to}`);
  return body.rows.reduce((sum: number, row: { requests: number }) => sum + row.requests, 0);
}

describe("no read of an account answers 5xx after any usage the gateway contract accepts", () => {
  it(
    "a 10 GB pool and one 100-byte request: the balance forecasts no run-out in sight, and every read answers",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account);
      await send(account, [usageRecord(username(subuser.name), { bytes_in: 60, bytes_out: 40 })]);

      const balance = await call("GET", "/v1/residential/balance", { token: account.token });
      expect(balance.status).toBe(200);
      const body = await json(balance);
      expect(body.gb_used).toBe(100 / 1e9);
      // 100 bytes in 7 days would last 10 GB for ~1.9 million years: beyond the forecast's horizon.
      expect(body.forecast.avg_daily_gb).toBeGreaterThan(0);
      expect(body.forecast.projected_exhaustion_at).toBeNull();
      expect(await readEverything(account, subuser)).toEqual([]);
    },
  );

  it(
    "a pool run out by a petabyte (500 records of 1 TB each way): figures stay finite, every read answers",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account, { traffic_limit_gb: 0.001 });
      const records = Array.from({ length: 500 }, () =>
        usageRecord(username(subuser.name), { bytes_in: TB, bytes_out: TB }),
      );
      await send(account, records);

      const body = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
      expect(body).toMatchObject({ gb_purchased: 10, gb_used: 1_000_000, gb_remaining: 0, exhausted: true });
      expect(body.gb_overdrawn).toBe(1_000_000 - 10);
      expect(body.forecast.projected_exhaustion_at).toBeNull();
      const sub = await json(await call("GET", `/v1/subusers/${subuser.id}`, { token: account.token }));
      expect(sub.traffic_used_gb).toBe(1_000_000);
      expect(await readEverything(account, subuser)).toEqual([]);
    },
  );

  it(
    "usage stamped at the earliest and latest instants a record may carry is counted within the span the API keeps, and every read answers",
    SLOW,
    async () => {
      const account = await createAccount({ bandwidthGb: 10 });
      const subuser = await createSubuser(account);
      const name = username(subuser.name);
      const extremes = [
        "0000-01-01T00:00:00Z",
        "0000-01-01T00:00:00+23:59",
        "9999-12-31T23:59:59.999Z",
        "9999-12-31T23:59:59-23:59",
      ];
      const sentAt = Date.now();
      const response = await reportUsage(
        extremes.map((ts, index) =>
          usageRecord(name, { ts, bytes_in: 1, bytes_out: 0, client_ip: `198.51.100.${index}` }),
        ),
      );
      expect(response.status).toBe(202);
      expect((await json(response)).accepted).toBe(4);
      const log = await eventually(
        async () => json(await call("GET", "/v1/residential/requests", { token: account.token })),
        (body) => body.data.length === 2, // the request log keeps 48 hours: the two stamped in the far future
      );
      const sources = await json(await call("GET", `/v1/subusers/${subuser.id}/sources`, { token: account.token }));
      const times = [
        ...log.data.map((entry: { ts: string }) => entry.ts),
        ...sources.data.flatMap((source: { first_seen: string; last_seen: string }) => [
          source.first_seen,
          source.last_seen,
        ]),
      ];
      for (const time of times) {
        // RFC 3339 with a four-digit year, within 400 days before the report and 5 minutes after it.
        expect(time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(Date.parse(time)).toBeGreaterThanOrEqual(sentAt - 400 * 86_400_000 - 60_000);
        expect(Date.parse(time)).toBeLessThanOrEqual(Date.now() + 5 * 60_000);
      }
      await settleUsage(account);
      const pool = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
      expect(pool.gb_used).toBe(4 / 1e9); // every byte is billed, whatever its stamp
      expect(await readEverything(account, subuser)).toEqual([]);
    },
  );

  it("a query at the edges of the instants the API takes answers; past them, a 422, never a 5xx", async () => {
    const account = await createAccount();
    const at = (from: string, to: string) =>
      call("GET", `/v1/residential/traffic?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, {
        token: account.token,
      });
    expect((await at("0000-01-01", "0000-03-01")).status).toBe(200);
    expect((await at("9999-10-03", "9999-12-31T23:59:59.999Z")).status).toBe(200);
    const past = await at("0000-01-01T00:00:00+00:01", "0000-03-01");
    expect(past.status).toBe(422);
    expect((await json(past)).code).toBe("invalid_request");
    expect((await at("9999-12-01", "9999-12-31T23:59:59-00:01")).status).toBe(422);
  });
});

import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, traffic, usageRecord } from "../helpers/usage";
import { createReport, day, downloadText, EMAIL_DESTINATION, runToEnd } from "../reports/helpers";

const MINUTE = 60_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

const rowsOfJson = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("traffic reports grouped by domain (filters.group_by)", () => {
  it("gives one row per day, product and domain, summing to the same totals as the per-sub-user report", async () => {
    const account = await createAccount({ plan: "pro", bandwidthGb: 10 });
    const alice = await createSubuser(account);
    const bob = await createSubuser(account);
    const records = [
      usageRecord(username(alice.name), { target_host: "a.b.example.co.uk", bytes_in: 100 }),
      usageRecord(username(bob.name), { target_host: "www.example.co.uk", bytes_in: 200 }),
      usageRecord(username(bob.name), { target_host: "203.0.113.9", bytes_in: 40 }),
    ];
    expect((await reportUsage(records)).status).toBe(202);
    const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    await eventually(
      () => traffic(account, "residential", range),
      (body) => body.rows[0].requests === 3,
    );
    const report = await createReport(account, { type: "traffic", format: "json", filters: { group_by: "domain" } });
    expect(report.filters).toEqual({ group_by: "domain" });
    const run = await runToEnd(account, report.id);
    expect(run.status, run.error).toBe("completed");
    const rows = rowsOfJson(await downloadText(run.download_url));
    expect(rows.map((r) => [r.day, r.product, r.domain, r.requests, r.bytes_in])).toEqual([
      [day(Date.now()), "residential", "(ip)", 1, 40],
      [day(Date.now()), "residential", "example.co.uk", 2, 300],
    ]);
    expect(rows[0]).not.toHaveProperty("subuser_id");
    const perSubuser = await createReport(account, { type: "traffic", format: "json" });
    const bySubuser = rowsOfJson(await downloadText((await runToEnd(account, perSubuser.id)).download_url));
    const sum = (list: Array<Record<string, unknown>>) => list.reduce((s, r) => s + Number(r.bytes_in), 0);
    expect(sum(rows)).toBe(sum(bySubuser));
  });

  it("refuses group_by on other report types, and domain with a subusers filter (422 invalid_request)", async () => {
    const account = await createAccount({ plan: "pro" });
    const subuser = await createSubuser(account);
    const bodies = [
      { type: "subusers", filters: { group_by: "domain" } },
      { type: "traffic", filters: { group_by: "domain", subusers: [subuser.id] } },
    ];
    for (const body of bodies) {
      const response = await call("POST", "/v1/reports", {
        token: account.token,
        body: { name: "x", format: "csv", destination: EMAIL_DESTINATION, ...body },
      });
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
  });

  it("holds a day to 100 domains per product plus (other), like the API's answer, with the day's exact sums", async () => {
    const account = await createAccount({ bandwidthGb: 10 });
    const subuser = await createSubuser(account);
    const now = Date.now();
    const minute = now - (now % MINUTE);
    // Two minutes of one UTC day, 150 domains each: each minute's bucket names 100, the day sees 200.
    const records = [minute - 3 * MINUTE, minute - 2 * MINUTE].flatMap((m, k) =>
      Array.from({ length: 150 }, (_, i) =>
        usageRecord(username(subuser.name), { ts: iso(m + i), target_host: `www.d${k}x${i}.com`, bytes_in: 1000 + i }),
      ),
    );
    for (let i = 0; i < records.length; i += 100)
      expect((await reportUsage(records.slice(i, i + 100))).status).toBe(202);
    const range = `from=${iso(now - 3_600_000)}&to=${iso(now + MINUTE)}`;
    await eventually(
      () => traffic(account, "residential", range),
      (body) => body.rows[0]?.requests === records.length,
    );
    const dayStart = minute - 3 * MINUTE - ((minute - 3 * MINUTE) % DAY);
    const store = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(account.id));
    const rows = await store.reportTrafficDays(
      { from: dayStart, to: dayStart + DAY, products: null, subuserIds: null, groupBy: "domain" },
      null,
      1000,
    );
    const named = rows.filter((row) => row.domain !== "(other)");
    expect(named).toHaveLength(100);
    expect(rows.filter((row) => row.domain === "(other)")).toHaveLength(1);
    expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(records.length);
    // The 100 kept are the day's heaviest.
    expect(Math.min(...named.map((row) => row.bytesIn))).toBeGreaterThanOrEqual(1050);
  });
});

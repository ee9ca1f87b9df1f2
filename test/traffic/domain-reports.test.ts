import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, traffic, usageRecord } from "../helpers/usage";
import { createReport, day, downloadText, EMAIL_DESTINATION, runToEnd } from "../reports/helpers";

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
});

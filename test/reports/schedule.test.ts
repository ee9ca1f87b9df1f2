import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, env, json } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";
import { eventually } from "../helpers/usage";
import { createReport, fetchLink, finishedRun, getRun } from "./helpers";

afterEach(() => vi.useRealTimers());

// Times in the future of the real clock: alarms the stores set on this clock wait (one set in the past would ring
// at once, again and again, past the test's end).
const T = (iso: string) => Date.parse(iso);

function at(iso: string) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T(iso));
}

async function runsOf(reportId: string) {
  const rows = await env.DB.prepare("SELECT * FROM report_runs WHERE report_id = ? ORDER BY period_to")
    .bind(reportId)
    .all<Record<string, any>>();
  return rows.results;
}

async function reportOf(account: { token: string }, id: string) {
  return json(await call("GET", `/v1/reports/${id}`, { token: account.token }));
}

describe("scheduled reports: the every-minute cron", () => {
  it("runs a due report once for the period since the previous run, then moves next_run_at on", async () => {
    at("2027-11-23T10:15:00Z");
    const account = await createAccount();
    await createSubuser(account, { label: "scheduled" });
    const report = await createReport(account, { schedule: "0 * * * *" });
    expect(report.next_run_at).toBe("2027-11-23T11:00:00.000Z");

    at("2027-11-23T10:59:00Z");
    await runCron(T("2027-11-23T10:59:00Z"));
    expect(await runsOf(report.id)).toHaveLength(0);

    at("2027-11-23T11:00:20Z");
    await runCron(T("2027-11-23T11:00:00Z"));
    const [first] = await runsOf(report.id);
    expect(first).toMatchObject({
      trigger: "schedule",
      period_from: T("2027-11-23T10:15:00Z"),
      period_to: T("2027-11-23T11:00:00Z"),
    });
    expect((await reportOf(account, report.id)).next_run_at).toBe("2027-11-23T12:00:00.000Z");
    const run = await finishedRun(account, first?.id);
    expect(run).toMatchObject({
      status: "completed",
      from: "2027-11-23T10:15:00.000Z",
      to: "2027-11-23T11:00:00.000Z",
    });
    expect(await (await fetchLink(run.download_url)).text()).toContain("scheduled");

    at("2027-11-23T12:00:05Z");
    await runCron(T("2027-11-23T12:00:00Z"));
    const runs = await runsOf(report.id);
    expect(runs.map((r) => [r.period_from, r.period_to])).toEqual([
      [T("2027-11-23T10:15:00Z"), T("2027-11-23T11:00:00Z")],
      [T("2027-11-23T11:00:00Z"), T("2027-11-23T12:00:00Z")],
    ]);
    const listed = await json(await call("GET", "/v1/reports", { token: account.token }));
    expect(listed.data[0].recent_runs.map((r: { run_id: string }) => r.run_id)).toEqual(
      runs.map((r) => r.id).reverse(),
    );
    expect(listed.data[0].recent_runs[1]).toMatchObject({ status: "completed", trigger: "schedule", rows: 1 });
  });

  it("claims a due report exactly once when the cron runs twice, or twice at the same time", async () => {
    at("2027-11-23T10:15:00Z");
    const account = await createAccount();
    const report = await createReport(account, { schedule: "30 10 * * *" });
    at("2027-11-23T10:30:10Z");
    const scheduled = T("2027-11-23T10:30:00Z");
    await Promise.all([runCron(scheduled), runCron(scheduled), runCron(scheduled + 60_000)]);
    await runCron(scheduled);
    await runCron(scheduled + 120_000);
    const runs = await runsOf(report.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ period_to: scheduled, schedule_key: `${report.id}:${scheduled}` });
    expect((await reportOf(account, report.id)).next_run_at).toBe("2027-11-24T10:30:00.000Z");
  });

  it("after an outage, one run covers every missed occurrence (the period since the previous run)", async () => {
    at("2027-11-23T10:15:00Z");
    const account = await createAccount();
    const report = await createReport(account, { schedule: "0 * * * *" });
    at("2027-11-23T15:20:00Z");
    await runCron(T("2027-11-23T15:20:00Z"));
    const runs = await runsOf(report.id);
    expect(runs.map((r) => [r.period_from, r.period_to])).toEqual([
      [T("2027-11-23T10:15:00Z"), T("2027-11-23T15:00:00Z")],
    ]);
    expect((await reportOf(account, report.id)).next_run_at).toBe("2027-11-23T16:00:00.000Z");
  });

  it("does not run deleted or on-demand reports, nor reports of accounts below Pro", async () => {
    at("2027-11-23T10:15:00Z");
    const account = await createAccount();
    const deleted = await createReport(account, { schedule: "0 * * * *" });
    await call("DELETE", `/v1/reports/${deleted.id}`, { token: account.token });
    const onDemand = await createReport(account, { schedule: "0 * * * *" });
    await call("PATCH", `/v1/reports/${onDemand.id}`, { token: account.token, body: { schedule: null } });
    const downgraded = await createAccount();
    const waiting = await createReport(downgraded, { schedule: "0 * * * *" });
    expect((await admin("PATCH", `/accounts/${downgraded.id}`, { plan: "starter" })).status).toBe(200);
    at("2027-11-23T11:00:30Z");
    await runCron(T("2027-11-23T11:00:00Z"));
    for (const id of [deleted.id, onDemand.id, waiting.id]) expect(await runsOf(id)).toHaveLength(0);
  });
});

describe("retention: runs and files are deleted after 90 days", () => {
  it("the cron deletes runs older than 90 days with their R2 files; younger runs stay", async () => {
    at("2027-08-20T10:00:00Z");
    const account = await createAccount();
    await createSubuser(account, { label: "old" });
    const report = await createReport(account);
    const runOld = await json(
      await call("POST", `/v1/reports/${report.id}/run`, {
        token: account.token,
        body: { from: "2027-08-20", to: "2027-08-20" },
      }),
    );
    await finishedRun(account, runOld.run_id);
    at("2027-08-22T10:00:00Z");
    const runYoung = await json(
      await call("POST", `/v1/reports/${report.id}/run`, {
        token: account.token,
        body: { from: "2027-08-22", to: "2027-08-22" },
      }),
    );
    const young = await finishedRun(account, runYoung.run_id);
    const keys = await env.DB.prepare("SELECT id, file_key FROM report_runs WHERE report_id = ?")
      .bind(report.id)
      .all<{ id: string; file_key: string }>();
    const oldKey = keys.results.find((r) => r.id === runOld.run_id)?.file_key ?? "";
    expect(await env.REPORTS.head(oldKey)).not.toBeNull();

    at("2027-11-18T10:00:01Z"); // 90 days and a second after the first run
    await runCron(T("2027-11-18T10:00:00Z"));
    expect((await call("GET", `/v1/reports/runs/${runOld.run_id}`, { token: account.token })).status).toBe(404);
    expect(await env.REPORTS.head(oldKey)).toBeNull();
    expect((await getRun(account, young.run_id)).status).toBe("completed");
    await eventually(
      async () => (await fetchLink((await getRun(account, young.run_id)).download_url)).status,
      (status) => status === 200,
    );
  });
});

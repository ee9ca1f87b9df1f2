import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { RUN_ATTEMPTS } from "../../src/queues/report-runs";
import { createAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { env } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";
import { createReport, getRun, receiverUrl, startRun, webhookDestination } from "./helpers";

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/** Holds the report-runs queue's messages so a test delivers them by hand, as often and with what attempt it likes. */
function holdRunMessages() {
  const sent: Array<{ runId: string }> = [];
  vi.spyOn(env.REPORT_RUNS_QUEUE, "send").mockImplementation(async (body) => {
    sent.push(body as { runId: string });
    return undefined as never;
  });
  vi.spyOn(env.REPORT_RUNS_QUEUE, "sendBatch").mockImplementation(async (messages) => {
    for (const message of messages) sent.push(message.body as { runId: string });
    return undefined as never;
  });
  const deliver = async (body: { runId: string }, attempts = 1) => {
    const batch = createMessageBatch("report-runs", [
      { id: crypto.randomUUID(), timestamp: new Date(), attempts, body },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    return getQueueResult(batch, ctx);
  };
  return { sent, deliver };
}

async function reportEvents(accountId: string) {
  const rows = await env.DB.prepare("SELECT type FROM events WHERE account_id = ? AND type LIKE 'report_run.%'")
    .bind(accountId)
    .all<{ type: string }>();
  return rows.results.map((row) => row.type);
}

describe("the report-runs queue", () => {
  it("POST /run only records the run and sends one message; the consumer does the work", async () => {
    const queue = holdRunMessages();
    const account = await createAccount();
    await createSubuser(account, { label: "queued" });
    const report = await createReport(account);
    const runId = await startRun(account, report.id);
    expect(queue.sent).toEqual([{ runId }]);
    expect((await getRun(account, runId)).status).toBe("queued");
    const result = await queue.deliver({ runId });
    expect(result.explicitAcks).toHaveLength(1);
    expect(await getRun(account, runId)).toMatchObject({ status: "completed", rows: 1 });
  });

  it("a redelivered message of a finished run changes nothing and delivers nothing twice", async () => {
    const queue = holdRunMessages();
    const account = await createAccount();
    const url = receiverUrl();
    const report = await createReport(account, { destination: webhookDestination(url) });
    const runId = await startRun(account, report.id);
    await queue.deliver({ runId });
    const first = await getRun(account, runId);
    await queue.deliver({ runId }, 2);
    const again = await getRun(account, runId);
    expect(again.completed_at).toBe(first.completed_at);
    const received = (await (await fetch(`${new URL(url).origin}/__received`)).json()) as unknown[];
    expect(received).toHaveLength(2); // the pre-flight check and one delivery
    expect(await reportEvents(account.id)).toEqual(["report_run.completed"]);
  });

  it("an attempt that cannot produce the file is retried; the last attempt fails the run with report_run.failed", async () => {
    const queue = holdRunMessages();
    const account = await createAccount();
    const report = await createReport(account);
    const runId = await startRun(account, report.id);
    vi.spyOn(env.REPORTS, "put").mockRejectedValue(new Error("R2 is down"));
    const first = await queue.deliver({ runId }, 1);
    expect(first.retryMessages).toHaveLength(1);
    expect((await getRun(account, runId)).status).toBe("queued");
    const last = await queue.deliver({ runId }, RUN_ATTEMPTS);
    expect(last.explicitAcks).toHaveLength(1);
    const run = await getRun(account, runId);
    expect(run).toMatchObject({ status: "failed", error: "the file could not be produced; start the run again" });
    expect(run.download_url).toBeNull();
    expect(await reportEvents(account.id)).toEqual(["report_run.failed"]);
  });

  it("a run whose message was lost is sent again once, 15 minutes after it was recorded", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(new Date("2026-11-23T10:00:00Z"));
    const queue = holdRunMessages();
    const account = await createAccount();
    const report = await createReport(account);
    const runId = await startRun(account, report.id);
    queue.sent.length = 0; // the message is lost
    await runCron(Date.parse("2026-11-23T10:14:00Z"));
    expect(queue.sent).toEqual([]);
    await runCron(Date.parse("2026-11-23T10:15:00Z"));
    await runCron(Date.parse("2026-11-23T10:15:00Z"));
    await runCron(Date.parse("2026-11-23T10:16:00Z"));
    expect(queue.sent).toEqual([{ runId }, { runId }]); // the mark's minute, run twice (an overlap): harmless
    await queue.deliver({ runId });
    await queue.deliver({ runId });
    expect(await getRun(account, runId)).toMatchObject({ status: "completed", rows: 0 });
    expect(await reportEvents(account.id)).toEqual(["report_run.completed"]);
  });

  it("a run of a report deleted before it started fails with the reason", async () => {
    const queue = holdRunMessages();
    const account = await createAccount();
    const report = await createReport(account);
    const runId = await startRun(account, report.id);
    await env.DB.prepare("UPDATE reports SET deleted_at = 1 WHERE id = ?").bind(report.id).run();
    await queue.deliver({ runId });
    expect(await getRun(account, runId)).toMatchObject({
      status: "failed",
      error: "the report was deleted before the run started",
    });
  });
});

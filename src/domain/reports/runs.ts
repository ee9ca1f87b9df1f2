import { and, eq, gt, inArray, isNull, lte, sql } from "drizzle-orm";
import { accounts, type ReportRunRow, reportRuns, reports } from "../../db/schema";
import { DAY, MINUTE, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { plansWith } from "../../vocabulary";
import { commitAudited } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertReportsAllowed, findReport } from "./definitions";
import { nextRunAfter } from "./schedule";

/** Runs and their files are kept this long (spec §8.5); on-demand periods may start at most this far back. */
export const RUN_RETENTION_MS = 90 * DAY;
/** Reports claimed per cron run; the next minute takes the rest. */
const CLAIM_LIMIT = 100;
/** Missed occurrences folded into one catch-up run, at most (a long outage of an every-minute schedule). */
const MAX_SKIPPED_OCCURRENCES = 10_000;

export interface RunMessage {
  runId: string;
}

/** Midnight UTC of a date's day. */
function dayStart(ms: number): number {
  return ms - (ms % DAY);
}

/**
 * `POST /reports/{id}/run`: the period is whole UTC days, `from` through `to` inclusive (`[from 00:00, to+1
 * 00:00)`), `from` ≤ `to`, not before the retention horizon (90 days back) and not after today. The run is
 * recorded `queued` and handed to the queue.
 */
export async function requestRun(
  ctx: DomainContext,
  principal: Principal,
  reportId: string,
  range: { from: number; to: number },
): Promise<ReportRunRow> {
  const report = await findReport(ctx, principal, reportId);
  const at = now();
  const today = dayStart(at);
  const invalid = (field: string, message: string) =>
    new ApiError("invalid_request", `${field}: ${message}.`, { details: [{ field, message }] });
  if (range.from > range.to) throw invalid("from", "must not be after to");
  if (range.from < today - RUN_RETENTION_MS) throw invalid("from", "must be within the last 90 days");
  if (range.to > today) throw invalid("to", "must not be after today (UTC)");
  const requested = {
    id: newId("run", at),
    accountId: report.accountId,
    reportId: report.id,
    trigger: "manual" as const,
    status: "queued" as const,
    periodFrom: range.from,
    periodTo: range.to + DAY,
    format: report.format,
    createdAt: at,
  };
  const [run] = await commitAudited(ctx, ctx.db.insert(reportRuns).values(requested).returning(), {
    action: "report_run.requested",
    accountId: report.accountId,
    resourceId: requested.id,
    after: requested,
  });
  if (!run) throw new Error("manual report run was not recorded");
  await enqueue(ctx, run.id);
  return run;
}

/** Hands a run to the queue; a run the queue refused is marked failed rather than left queued forever. */
async function enqueue(ctx: DomainContext, runId: string): Promise<void> {
  try {
    await ctx.env.REPORT_RUNS_QUEUE.send({ runId } satisfies RunMessage);
  } catch (error) {
    await ctx.db
      .update(reportRuns)
      .set({ status: "failed", error: "the run could not be queued; start it again", completedAt: now() })
      .where(eq(reportRuns.id, runId));
    throw error;
  }
}

/** A run of the caller's account; unknown and other accounts' ids answer 404 `report_run_not_found`. */
export async function findRun(ctx: DomainContext, principal: Principal, id: string): Promise<ReportRunRow> {
  assertReportsAllowed(principal);
  const run = isId("run", id)
    ? await ctx.db
        .select()
        .from(reportRuns)
        .where(and(eq(reportRuns.id, id), eq(reportRuns.accountId, principal.accountId)))
        .get()
    : undefined;
  if (!run) throw new ApiError("report_run_not_found");
  return run;
}

/** The last occurrence due by `at`, from the first one due (missed occurrences become one run). */
function latestDue(schedule: string, firstDue: number, at: number): number {
  let due = firstDue;
  for (let i = 0; i < MAX_SKIPPED_OCCURRENCES; i++) {
    const next = nextRunAfter(schedule, due);
    if (next === null || next > at) break;
    due = next;
  }
  return due;
}

/**
 * The cron step: every report whose schedule is due gets one run for the period since its previous run. A report is
 * claimed by moving `next_run_at` forward only if it still holds the value read (compare-and-set), and the run's
 * `schedule_key` (report + due time) is unique, so an overlapping or repeated cron run never runs a period twice.
 * Reports of accounts below the Pro plan are not run (their schedules wait for an upgrade).
 */
export async function claimDueReports(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select()
    .from(reports)
    .where(
      and(
        isNull(reports.deletedAt),
        lte(reports.nextRunAt, at),
        inArray(
          reports.accountId,
          ctx.db
            .select({ id: accounts.id })
            .from(accounts)
            .where(inArray(accounts.plan, plansWith("reports"))),
        ),
      ),
    )
    .limit(CLAIM_LIMIT);
  let claimed = 0;
  for (const report of due) {
    if (report.schedule === null || report.nextRunAt === null) continue;
    const dueAt = latestDue(report.schedule, report.nextRunAt, at);
    const runId = newId("run", at);
    // One atomic batch: the run is recorded only if the report still holds the due time read, and moved on with it.
    const [inserted] = await ctx.db.batch([
      // Every column, in the table's order (rows, bytes, file_key, error null; attempts 0; not started).
      ctx.db.insert(reportRuns).select(sql`
        SELECT ${runId}, account_id, id, 'schedule', 'queued', coalesce(period_start, created_at), ${dueAt}, format,
          NULL, NULL, NULL, NULL, ${`${report.id}:${dueAt}`}, 0, ${at}, NULL, NULL
        FROM reports WHERE id = ${report.id} AND next_run_at = ${report.nextRunAt} AND deleted_at IS NULL
        ON CONFLICT (schedule_key) DO NOTHING`),
      ctx.db
        .update(reports)
        .set({ nextRunAt: nextRunAfter(report.schedule, dueAt), periodStart: dueAt })
        .where(and(eq(reports.id, report.id), eq(reports.nextRunAt, report.nextRunAt))),
    ]);
    if (inserted.meta.changes !== 1) continue;
    await enqueue(ctx, runId);
    claimed++;
  }
  return claimed;
}

/** A run still `queued` this long after it was recorded lost its message (a crash between the record and the send). */
export const REQUEUE_AFTER_MS = 15 * MINUTE;

/**
 * The cron step that sends such runs once more: those that crossed the 15-minute mark within the last minute, so
 * each is re-sent once (a second message for a run that was only slow finds it taken and does nothing).
 */
export async function requeueLostRuns(ctx: DomainContext, at: number): Promise<number> {
  const lost = await ctx.db
    .select({ id: reportRuns.id })
    .from(reportRuns)
    .where(
      and(
        eq(reportRuns.status, "queued"),
        lte(reportRuns.createdAt, at - REQUEUE_AFTER_MS),
        gt(reportRuns.createdAt, at - REQUEUE_AFTER_MS - MINUTE),
      ),
    );
  if (lost.length === 0) return 0;
  await ctx.env.REPORT_RUNS_QUEUE.sendBatch(lost.map((run) => ({ body: { runId: run.id } satisfies RunMessage })));
  return lost.length;
}

/** Runs past retention: their files leave R2, then their rows leave D1. Returns how many went. */
export async function pruneExpiredRuns(ctx: DomainContext, at: number): Promise<number> {
  const expired = await ctx.db
    .select({ id: reportRuns.id, fileKey: reportRuns.fileKey })
    .from(reportRuns)
    .where(lte(reportRuns.createdAt, at - RUN_RETENTION_MS))
    .limit(1_000);
  if (expired.length === 0) return 0;
  const keys = expired.flatMap((run) => (run.fileKey ? [run.fileKey] : []));
  if (keys.length > 0) await ctx.env.REPORTS.delete(keys);
  await ctx.db.delete(reportRuns).where(
    inArray(
      reportRuns.id,
      expired.map((run) => run.id),
    ),
  );
  return expired.length;
}

/** The stored file of a run (for its signed link): 404 once the run or its file is gone. */
export async function openRunFile(
  ctx: DomainContext,
  runId: string,
): Promise<{ object: R2ObjectBody; fileName: string }> {
  const run = isId("run", runId)
    ? await ctx.db.select({ fileKey: reportRuns.fileKey }).from(reportRuns).where(eq(reportRuns.id, runId)).get()
    : undefined;
  const object = run?.fileKey ? await ctx.env.REPORTS.get(run.fileKey) : null;
  if (!run?.fileKey || !object) throw new ApiError("report_run_not_found", "The report file no longer exists.");
  return { object, fileName: run.fileKey.slice(run.fileKey.lastIndexOf("/") + 1) };
}

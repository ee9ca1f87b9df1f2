import { and, eq, lte, or, sql } from "drizzle-orm";
import { type ReportRow, type ReportRunRow, reportRuns, reports } from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import { logError } from "../../platform/logger";
import type { DomainContext } from "../context";
import { eventStatement, eventTypes } from "../events";
import { runUnitOfWork } from "../unit-of-work";
import { DestinationError, deliver } from "./destinations";
import { signDownloadLink } from "./download-link";
import { contentTypes, encodeRows } from "./formats";
import { runEventId, runSummaryPayload } from "./run-payload";
import { MultipartSink } from "./sink";
import { reportKindOf } from "./types";

/** A queue consumer lives at most 15 minutes: a run `running` for longer was abandoned by a crash. */
const RUN_STALE_MS = 15 * MINUTE;

const EXTENSIONS = { csv: "csv", tsv: "tsv", json: "ndjson", parquet: "parquet" } as const;

/**
 * Executes a run from the queue: `queued` → `running`, the file streamed to R2, then the destination, then
 * `completed` or `failed` with a `report_run.completed` / `report_run.failed` event in the same D1 batch. A file
 * that was produced stays in R2 with its link even when the destination fails. A redelivered message finds the run
 * finished, or running, and does nothing; a run left `running` longer than a consumer may live (a crashed attempt)
 * is taken again, overwriting its file.
 */
export async function executeRun(ctx: DomainContext, runId: string): Promise<void> {
  const at = now();
  const claimed = await ctx.db
    .update(reportRuns)
    .set({ status: "running", startedAt: at, attempts: sql`${reportRuns.attempts} + 1` })
    .where(
      and(
        eq(reportRuns.id, runId),
        or(
          eq(reportRuns.status, "queued"),
          and(eq(reportRuns.status, "running"), lte(reportRuns.startedAt, at - RUN_STALE_MS)),
        ),
      ),
    )
    .returning();
  const run = claimed[0];
  if (!run) return;
  const report = await ctx.db.select().from(reports).where(eq(reports.id, run.reportId)).get();
  if (!report || report.deletedAt !== null) {
    await finishRun(ctx, run, { error: "the report was deleted before the run started" });
    return;
  }
  const file = await produceFile(ctx, report, run);
  const produced = { ...run, ...file };
  await ctx.db.update(reportRuns).set(file).where(eq(reportRuns.id, run.id));
  await finishRun(ctx, produced, { error: await deliverFile(ctx, report, produced) });
}

/** Sends the produced file to the report's destination; the reason it failed, or null. */
async function deliverFile(
  ctx: DomainContext,
  report: ReportRow,
  run: ReportRunRow & { fileKey: string; rows: number; bytes: number },
): Promise<string | null> {
  // No request here (a queue consumer): the link points at the API's configured public origin.
  const link = await signDownloadLink(ctx.env, run.id, ctx.env.API_ORIGIN);
  try {
    await deliver(ctx, {
      report,
      run,
      downloadUrl: link.url,
      expiresAt: link.expiresAt,
      fileName: run.fileKey.slice(run.fileKey.lastIndexOf("/") + 1),
      contentType: contentTypes[run.format],
    });
    return null;
  } catch (error) {
    const reason = error instanceof DestinationError ? error.message : `${report.destination.type}: ${String(error)}`;
    return `destination failed: ${reason}`;
  }
}

/** An attempt that threw gives the run back to the queue's retry. */
export async function releaseRun(ctx: DomainContext, runId: string): Promise<void> {
  await ctx.db
    .update(reportRuns)
    .set({ status: "queued" })
    .where(and(eq(reportRuns.id, runId), eq(reportRuns.status, "running")));
}

/** Streams the report's rows into `<account>/<report>/<run>.<ext>` in R2. */
async function produceFile(ctx: DomainContext, report: ReportRow, run: ReportRunRow) {
  const fileKey = `${run.accountId}/${report.id}/${run.id}.${EXTENSIONS[run.format]}`;
  const kind = reportKindOf(report.type, report.filters);
  const sink = new MultipartSink(ctx.env.REPORTS, fileKey, contentTypes[run.format]);
  try {
    const scope = {
      accountId: run.accountId,
      from: run.periodFrom,
      to: run.periodTo,
      products: report.filters.products ?? null,
      subuserIds: report.filters.subuserIds ?? null,
      groupBy: report.filters.groupBy,
    };
    const rows = await encodeRows(run.format, kind.columns, kind.pages(ctx, scope), sink);
    const bytes = await sink.close();
    return { fileKey, rows, bytes };
  } catch (error) {
    await sink.abort();
    throw error;
  }
}

/** The run's last write: its status and the matching event, in one batch. */
async function finishRun(ctx: DomainContext, run: ReportRunRow, outcome: { error: string | null }): Promise<void> {
  const at = now();
  const status = outcome.error === null ? "completed" : "failed";
  const type = status === "completed" ? eventTypes.reportRunCompleted : eventTypes.reportRunFailed;
  await runUnitOfWork(ctx, [
    ctx.db.update(reportRuns).set({ status, error: outcome.error, completedAt: at }).where(eq(reportRuns.id, run.id)),
    eventStatement(ctx, {
      accountId: run.accountId,
      type,
      // No link in the event: it would expire within the hour, while deliveries are retried for 24 h.
      id: runEventId(run.id),
      payload: { ...runSummaryPayload({ ...run, status, error: outcome.error, completedAt: at }) },
      dedupeKey: `${type}:${run.id}`,
      at,
    }),
  ]);
}

/** The queue gave up on a run (every attempt threw): it is failed for good. */
export async function abandonRun(ctx: DomainContext, runId: string, error: unknown): Promise<void> {
  logError("report_run_failed", { run_id: runId }, error);
  const run = await ctx.db.select().from(reportRuns).where(eq(reportRuns.id, runId)).get();
  if (!run || run.status === "completed" || run.status === "failed") return;
  await finishRun(ctx, run, { error: "the file could not be produced; start the run again" });
}

import type { ReportRunRow } from "../../db/schema";
import { toIso } from "../../platform/clock";
import { idPrefixes } from "../../platform/ids";

/** A report run as the API shows it and as its events carry it (`GET /reports/runs/{id}`, `report_run.*`). */
export interface RunPayload {
  run_id: string;
  report_id: string;
  status: ReportRunRow["status"];
  trigger: ReportRunRow["trigger"];
  from: string;
  to: string;
  format: ReportRunRow["format"];
  rows: number | null;
  bytes: number | null;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  error: string | null;
  download_url: string | null;
  download_expires_at: string | null;
}

export type RunSummaryPayload = Omit<RunPayload, "download_url" | "download_expires_at">;

const isoOrNull = (ms: number | null) => (ms === null ? null : toIso(ms));

export function runPayload(run: ReportRunRow, link: { url: string; expiresAt: number } | null = null): RunPayload {
  return {
    run_id: run.id,
    report_id: run.reportId,
    status: run.status,
    trigger: run.trigger,
    from: toIso(run.periodFrom),
    to: toIso(run.periodTo),
    format: run.format,
    rows: run.rows,
    bytes: run.bytes,
    created_at: toIso(run.createdAt),
    started_at: isoOrNull(run.startedAt),
    completed_at: isoOrNull(run.completedAt),
    error: run.error,
    download_url: link?.url ?? null,
    download_expires_at: link ? toIso(link.expiresAt) : null,
  };
}

export function runSummaryPayload(run: ReportRunRow): RunSummaryPayload {
  const { download_url: _url, download_expires_at: _expires, ...summary } = runPayload(run);
  return summary;
}

/**
 * The id of a run's outcome event (`report_run.completed` or `.failed`, never both): the run's own ULID behind the
 * event prefix. Known before the event is recorded, so a report's webhook destination and the account's webhook
 * endpoints receive the one event under one id, on every retry.
 */
export function runEventId(runId: string): string {
  return `${idPrefixes.event}_${runId.slice(idPrefixes.run.length + 1)}`;
}

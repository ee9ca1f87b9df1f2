import { and, desc, eq, inArray, isNull, sql } from "drizzle-orm";
import {
  type Product,
  type ReportFilters,
  type ReportFormat,
  type ReportRow,
  type ReportRunRow,
  type ReportType,
  reportRuns,
  reports,
  type StoredDestination,
} from "../../db/schema";
import { now } from "../../platform/clock";
import { seal } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { type AuditAction, commitAudited } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertPlanHas } from "../plans";
import { assertAccountWide } from "../scope";
import { preflightWebhook } from "./destinations/webhook";
import { nextRunAfter, parseSchedule } from "./schedule";

/** A destination as given: the stored part and, for a webhook, its signing secret (sealed at rest, never shown). */
export type DestinationInput =
  | { type: "email"; email: string }
  | { type: "webhook"; url: string; signingSecret?: string }
  | { type: "s3"; bucket: string; prefix: string; roleArn: string; region: string }
  | { type: "gcs"; bucket: string; prefix: string; serviceAccountEmail: string };

export interface NewReport {
  name: string;
  type: ReportType;
  filters: { products?: Product[]; subuserIds?: string[]; groupBy?: "subuser" | "domain" };
  schedule?: string | null;
  format: ReportFormat;
  destination: DestinationInput;
}

export type ReportPatch = Partial<Omit<NewReport, "type">>;

/** Runs shown with each definition in the list. */
export const RECENT_RUNS = 5;

/** Parquet is a file for storage buckets, not for a mail or a webhook (spec §2.11). */
function assertFormatFits(format: ReportFormat, destination: { type: string }): void {
  if (format === "parquet" && destination.type !== "s3" && destination.type !== "gcs") {
    throw new ApiError("invalid_request", "format: parquet is only available for s3 and gcs destinations.", {
      details: [{ field: "format", message: "parquet is only available for s3 and gcs destinations" }],
    });
  }
}

/** The schedule's columns: the next due time, and where the first scheduled period starts (kept across changes). */
function scheduleFields(schedule: string | null, at: number, periodStart: number | null = null) {
  if (schedule === null) return { schedule: null, nextRunAt: null, periodStart: null };
  const normalized = parseSchedule(schedule);
  return { schedule: normalized, nextRunAt: nextRunAfter(normalized, at), periodStart: periodStart ?? at };
}

function storedFilters(filters: NewReport["filters"]): ReportFilters {
  return {
    ...(filters.products ? { products: filters.products } : {}),
    ...(filters.subuserIds ? { subuserIds: filters.subuserIds } : {}),
    ...(filters.groupBy ? { groupBy: filters.groupBy } : {}),
  };
}

/** `group_by` groups `traffic` reports only, and `domain` takes no sub-user filter (the domain rollups hold none). */
function assertGroupingFits(type: ReportType, filters: NewReport["filters"]): void {
  const problem =
    filters.groupBy !== undefined && type !== "traffic"
      ? "group_by applies to traffic reports only"
      : filters.groupBy === "domain" && filters.subuserIds !== undefined
        ? "group_by domain does not combine with a subusers filter"
        : null;
  if (problem === null) return;
  throw new ApiError("invalid_request", `filters.group_by: ${problem}.`, {
    details: [{ field: "filters.group_by", message: problem }],
  });
}

/**
 * The stored destination and its sealed secret. A webhook is checked first (a signed test delivery, 422
 * `destination_unreachable` unless it answers 2xx, its `livemode` the caller's); on an update without a new
 * `signing_secret` the old one stays.
 */
async function prepareDestination(
  ctx: DomainContext,
  principal: Principal,
  input: DestinationInput,
  previous: ReportRow | null,
): Promise<{ destination: StoredDestination; destinationSecretSealed: string | null }> {
  if (input.type !== "webhook") return { destination: input, destinationSecretSealed: null };
  const keptSecret = previous?.destination.type === "webhook" ? previous.destinationSecretSealed : null;
  if (!input.signingSecret && !keptSecret) {
    throw new ApiError("invalid_request", "destination.signing_secret: required for a webhook destination.", {
      details: [{ field: "destination.signing_secret", message: "required for a webhook destination" }],
    });
  }
  const sealed = input.signingSecret ? await seal(input.signingSecret, ctx.env.SEALING_KEY) : (keptSecret as string);
  await preflightWebhook(ctx, { url: input.url, sealedSecret: sealed }, principal.livemode);
  return { destination: { type: "webhook", url: input.url }, destinationSecretSealed: sealed };
}

/**
 * Reports are for the plans that have them, and for keys without a product scope: a report's file spans the
 * account's products (sub-users of several, invoices, traffic by sub-user) beyond any filter a scoped key could hold.
 */
export function assertReportsAllowed(principal: Principal): void {
  assertPlanHas(principal, "reports");
  assertAccountWide(principal, "Reports cover every product of the account");
}

export async function createReport(ctx: DomainContext, principal: Principal, input: NewReport): Promise<ReportRow> {
  assertReportsAllowed(principal);
  assertFormatFits(input.format, input.destination);
  assertGroupingFits(input.type, input.filters);
  const at = now();
  const schedule = scheduleFields(input.schedule ?? null, at);
  const destination = await prepareDestination(ctx, principal, input.destination, null);
  const report = {
    id: newId("report", at),
    accountId: principal.accountId,
    name: input.name,
    type: input.type,
    filters: storedFilters(input.filters),
    format: input.format,
    ...schedule,
    ...destination,
    createdAt: at,
    updatedAt: at,
  };
  const [row] = await commitAudited(ctx, ctx.db.insert(reports).values(report).returning(), {
    ...reportAudit(report, "report.created"),
    after: report,
  });
  return row as ReportRow;
}

/** A live report of the caller's account; unknown, deleted and other accounts' ids answer 404 `report_not_found`. */
export async function findReport(ctx: DomainContext, principal: Principal, id: string): Promise<ReportRow> {
  assertReportsAllowed(principal);
  const report = isId("report", id)
    ? await ctx.db
        .select()
        .from(reports)
        .where(and(eq(reports.id, id), eq(reports.accountId, principal.accountId), isNull(reports.deletedAt)))
        .get()
    : undefined;
  if (!report) throw new ApiError("report_not_found");
  return report;
}

/** A page of the account's live reports, newest first, each with its latest runs. */
export async function listReports(
  ctx: DomainContext,
  principal: Principal,
  query: PageQuery,
): Promise<Array<ReportRow & { recentRuns: ReportRunRow[] }>> {
  assertReportsAllowed(principal);
  const page = keysetPage(reports.id, query);
  const rows = await ctx.db
    .select()
    .from(reports)
    .where(and(eq(reports.accountId, principal.accountId), isNull(reports.deletedAt), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
  const runs = await recentRunsOf(
    ctx,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ ...row, recentRuns: runs.get(row.id) ?? [] }));
}

async function recentRunsOf(ctx: DomainContext, reportIds: string[]): Promise<Map<string, ReportRunRow[]>> {
  if (reportIds.length === 0) return new Map();
  const ranked = ctx.db
    .select({
      id: reportRuns.id,
      n: sql<number>`row_number() OVER (PARTITION BY ${reportRuns.reportId} ORDER BY ${reportRuns.id} DESC)`.as("n"),
    })
    .from(reportRuns)
    .where(inArray(reportRuns.reportId, reportIds))
    .as("ranked");
  const rows = await ctx.db
    .select({ run: reportRuns })
    .from(reportRuns)
    .innerJoin(ranked, eq(ranked.id, reportRuns.id))
    .where(sql`${ranked.n} <= ${RECENT_RUNS}`)
    .orderBy(desc(reportRuns.id));
  return Map.groupBy(
    rows.map(({ run }) => run),
    (run) => run.reportId,
  );
}

export async function updateReport(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  patch: ReportPatch,
): Promise<ReportRow> {
  const report = await findReport(ctx, principal, id);
  const format = patch.format ?? report.format;
  assertFormatFits(format, patch.destination ?? report.destination);
  if (patch.filters !== undefined) assertGroupingFits(report.type, patch.filters);
  const at = now();
  const schedule = patch.schedule === undefined ? {} : scheduleFields(patch.schedule, at, report.periodStart);
  const destination = patch.destination ? await prepareDestination(ctx, principal, patch.destination, report) : {};
  const changes = {
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.filters !== undefined ? { filters: storedFilters(patch.filters) } : {}),
    format,
    ...schedule,
    ...destination,
    updatedAt: at,
  };
  const [row] = await commitAudited(
    ctx,
    ctx.db
      .update(reports)
      .set(changes)
      .where(and(eq(reports.id, report.id), isNull(reports.deletedAt)))
      .returning(),
    { ...reportAudit(report, "report.updated"), before: report, after: changes },
  );
  if (!row) throw new ApiError("report_not_found");
  return row;
}

/** Deletes the definition (no more scheduled runs); its runs and files stay until their 90 days are over. */
export async function deleteReport(ctx: DomainContext, principal: Principal, id: string): Promise<ReportRow> {
  const report = await findReport(ctx, principal, id);
  const at = now();
  const deletion = { deletedAt: at, nextRunAt: null, updatedAt: at };
  await commitAudited(
    ctx,
    ctx.db
      .update(reports)
      .set(deletion)
      .where(and(eq(reports.id, report.id), isNull(reports.deletedAt))),
    { ...reportAudit(report, "report.deleted"), before: report, after: deletion },
  );
  return report;
}

function reportAudit(report: { id: string; accountId: string }, action: AuditAction) {
  return { action, accountId: report.accountId, resourceId: report.id };
}

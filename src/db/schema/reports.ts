import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts, type Product } from "./accounts";

export const reportTypes = ["traffic", "requests", "invoices", "subusers", "isp_batches"] as const;
export type ReportType = (typeof reportTypes)[number];

/** `json` is newline-delimited JSON (the spec's value). */
export const reportFormats = ["csv", "tsv", "json", "parquet"] as const;
export type ReportFormat = (typeof reportFormats)[number];

export const destinationTypes = ["email", "webhook", "s3", "gcs"] as const;
export type DestinationType = (typeof destinationTypes)[number];

/** A destination as stored: everything but its secret (a webhook's signing secret is sealed in its own column). */
export type StoredDestination =
  | { type: "email"; email: string }
  | { type: "webhook"; url: string }
  | { type: "s3"; bucket: string; prefix: string; roleArn: string; region: string }
  | { type: "gcs"; bucket: string; prefix: string; serviceAccountEmail: string };

export interface ReportFilters {
  products?: Product[];
  subuserIds?: string[];
  /** `traffic` reports: rows per sub-user (absent, the default) or per target domain. */
  groupBy?: "subuser" | "domain";
}

export const runStatuses = ["queued", "running", "completed", "failed"] as const;
export type RunStatus = (typeof runStatuses)[number];

export const runTriggers = ["manual", "schedule"] as const;

/** Report definitions; a deleted one keeps its row (deleted_at) so its runs still resolve until retention. */
export const reports = sqliteTable(
  "reports",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull(),
    type: text("type", { enum: reportTypes }).notNull(),
    filters: text("filters", { mode: "json" }).$type<ReportFilters>().notNull(),
    schedule: text("schedule"),
    format: text("format", { enum: reportFormats }).notNull(),
    destination: text("destination", { mode: "json" }).$type<StoredDestination>().notNull(),
    destinationSecretSealed: text("destination_secret_sealed"),
    /** When the schedule is next due; the cron claims a report by moving this forward (compare-and-set). */
    nextRunAt: integer("next_run_at"),
    /** Where the next scheduled period starts: the previous due time (or when the schedule was set). */
    periodStart: integer("period_start"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    index("reports_account").on(t.accountId, t.id),
    index("reports_due").on(t.nextRunAt).where(sql`deleted_at IS NULL AND next_run_at IS NOT NULL`),
  ],
);

export const reportRuns = sqliteTable(
  "report_runs",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    reportId: text("report_id")
      .notNull()
      .references(() => reports.id),
    trigger: text("trigger", { enum: runTriggers }).notNull(),
    status: text("status", { enum: runStatuses }).notNull(),
    /** The period covered, [from, to) in epoch ms. */
    periodFrom: integer("period_from").notNull(),
    periodTo: integer("period_to").notNull(),
    format: text("format", { enum: reportFormats }).notNull(),
    rows: integer("rows"),
    bytes: integer("bytes"),
    /** The R2 key of the produced file; kept when a destination fails. */
    fileKey: text("file_key"),
    error: text("error"),
    /** `<report>:<due time>` for scheduled runs: a due time is run once, however often the cron runs. */
    scheduleKey: text("schedule_key").unique(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    startedAt: integer("started_at"),
    completedAt: integer("completed_at"),
  },
  (t) => [
    index("report_runs_account").on(t.accountId, t.id),
    index("report_runs_report").on(t.reportId, t.id),
    index("report_runs_created").on(t.createdAt),
    check("report_runs_status_known", sql`status IN ('queued', 'running', 'completed', 'failed')`),
  ],
);

export type ReportRow = typeof reports.$inferSelect;
export type ReportRunRow = typeof reportRuns.$inferSelect;

import { z } from "@hono/zod-openapi";
import {
  destinationTypes,
  type ReportRow,
  type ReportRunRow,
  reportFormats,
  reportTypes,
  runStatuses,
  runTriggers,
  type StoredDestination,
} from "../db/schema";
import type { DestinationInput } from "../domain/reports/definitions";
import { runPayload, runSummaryPayload } from "../domain/reports/run-payload";
import { SCHEDULE_MAX_LENGTH } from "../domain/reports/schedule";
import { toIso } from "../platform/clock";
import { email, id, idParam, integer, list, text, timestamp, token } from "../platform/fields";
import { productListSchema } from "./vocabulary";

// ── Inputs ──────────────────────────────────────────────────────────────────────────────────────────

export const reportIdParam = z.object({ id: idParam("report").openapi({ param: { name: "id", in: "path" } }) });
export const runIdParam = z.object({ id: idParam("run").openapi({ param: { name: "id", in: "path" } }) });

export const reportNameSchema = text(100, 1).openapi({ example: "Daily traffic" });

const productFilter = productListSchema;

export const filtersSchema = z
  .strictObject({
    products: productFilter.optional().openapi({ description: "Only these products (every type it applies to)." }),
    subusers: list(id("subuser"), 100)
      .min(1)
      .optional()
      .openapi({ description: "Only these sub-users (traffic, requests, subusers, isp_batches)." }),
    group_by: z
      .enum(["subuser", "domain"])
      .optional()
      .openapi({
        description:
          "`traffic` only: one row per day, product and `subuser_id` (the default), or per day, product and `domain` " +
          "(the registrable domain of the target host, as `GET /{product}/traffic?group_by=domain` groups it; " +
          "without a `subusers` filter). The rows sum to the same totals either way.",
      }),
  })
  .openapi("ReportFilters", { example: { products: ["residential"] } });

export const scheduleSchema = text(100)
  .nullable()
  .openapi({
    description:
      "A standard 5-field cron expression in UTC (`minute hour day-of-month month day-of-week`; day-of-month and " +
      "day-of-week combine with OR). Extensions (`@daily`, `L`, `W`, `#`, `?`, seconds) are refused with 422 " +
      "`invalid_cron`. Each scheduled run covers the period since the previous one. null or absent: on demand only.",
    example: "0 6 * * 1",
  });

const prefixSchema = token(/^[A-Za-z0-9!_.*'()/-]{0,512}$/, 512, "must be up to 512 URL-safe characters")
  .default("")
  .openapi({ description: "Prepended to the object name (`<prefix><report id>/<run id>.<ext>`).", example: "proxy/" });

const emailDestination = z
  .strictObject({ type: z.literal("email"), email: email() })
  .openapi("EmailDestination", { example: { type: "email", email: "ops@example.com" } });

const webhookSecret = token(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/, 100, "must be whsec_ and 24-64 base64 bytes").openapi(
  {
    description:
      "Standard Webhooks secret (`whsec_` + base64 of 24-64 bytes). Write-only: sealed at rest, never shown.",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  },
);

function webhookDestination(secretRequired: boolean) {
  return z
    .strictObject({
      type: z.literal("webhook"),
      url: z
        .url()
        .max(2048)
        .openapi({ description: "Public https URL.", example: "https://hooks.example.com/reports" }),
      signing_secret: secretRequired
        ? webhookSecret
        : webhookSecret
            .optional()
            .openapi({ description: "Omit to keep the current secret of a webhook destination." }),
    })
    .openapi(secretRequired ? "WebhookDestination" : "WebhookDestinationUpdate", {
      example: {
        type: "webhook",
        url: "https://hooks.example.com/reports",
        signing_secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      },
    });
}

const s3Destination = z
  .strictObject({
    type: z.literal("s3"),
    bucket: token(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 63, "must be an S3 bucket name"),
    prefix: prefixSchema,
    role_arn: token(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, 600, "must be an IAM role ARN").openapi({
      description: "A role we assume with STS (external id: your account id) to write the object.",
      example: "arn:aws:iam::123456789012:role/proxy-reports",
    }),
    region: token(/^[a-z]{2}(-[a-z]+)+-\d$/, 32, "must be an AWS region").default("us-east-1"),
  })
  .openapi("S3Destination", {
    example: {
      type: "s3",
      bucket: "acme-exports",
      prefix: "proxy/",
      role_arn: "arn:aws:iam::123456789012:role/proxy-reports",
      region: "us-east-1",
    },
  });

const gcsDestination = z
  .strictObject({
    type: z.literal("gcs"),
    bucket: token(/^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/, 222, "must be a GCS bucket name"),
    prefix: prefixSchema,
    service_account_email: email().openapi({
      description: "Your service account, which grants ours `roles/iam.serviceAccountTokenCreator`; we impersonate it.",
      example: "reports@acme.iam.gserviceaccount.com",
    }),
  })
  .openapi("GcsDestination", {
    example: {
      type: "gcs",
      bucket: "acme-exports",
      prefix: "proxy/",
      service_account_email: "reports@acme.iam.gserviceaccount.com",
    },
  });

export function destinationSchema(secretRequired: boolean) {
  return z
    .discriminatedUnion("type", [emailDestination, webhookDestination(secretRequired), s3Destination, gcsDestination])
    .openapi({ description: "Where each completed file goes (the file itself always stays in R2 for 90 days)." });
}

type DestinationBody = z.infer<ReturnType<typeof destinationSchema>>;

export function toDestinationInput(body: DestinationBody): DestinationInput {
  switch (body.type) {
    case "email":
      return body;
    case "webhook":
      return { type: "webhook", url: body.url, signingSecret: body.signing_secret };
    case "s3":
      return { type: "s3", bucket: body.bucket, prefix: body.prefix, roleArn: body.role_arn, region: body.region };
    case "gcs":
      return {
        type: "gcs",
        bucket: body.bucket,
        prefix: body.prefix,
        serviceAccountEmail: body.service_account_email,
      };
  }
}

export function toFilters(filters: z.infer<typeof filtersSchema>) {
  return { products: filters.products, subuserIds: filters.subusers, groupBy: filters.group_by };
}

// ── Outputs ─────────────────────────────────────────────────────────────────────────────────────────

const storedDestinationSchema = z
  .object({
    type: z.enum(destinationTypes),
    email: email().optional(),
    url: z.url().max(2048).optional(),
    bucket: token(/^[a-z0-9._-]{3,222}$/, 222).optional(),
    prefix: token(/^[A-Za-z0-9!_.*'()/-]{0,512}$/, 512).optional(),
    role_arn: token(/^arn:[\w+=,.@/:-]{1,590}$/, 600).optional(),
    region: token(/^[a-z0-9-]{1,32}$/, 32).optional(),
    service_account_email: email().optional(),
  })
  .openapi("ReportDestination", {
    description: "The destination as given, without its secret (`signing_secret` is write-only).",
  });

export const reportSchema = z
  .object({
    id: id("report"),
    name: reportNameSchema,
    type: z.enum(reportTypes),
    filters: filtersSchema,
    schedule: text(SCHEDULE_MAX_LENGTH).nullable(),
    next_run_at: timestamp().nullable().openapi({ description: "When the schedule next runs; null on demand." }),
    format: z.enum(reportFormats),
    destination: storedDestinationSchema,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi("Report");

export const reportRunSchema = z
  .object({
    run_id: id("run"),
    report_id: id("report"),
    status: z.enum(runStatuses).openapi({
      description: "`queued` → `running` → `completed` | `failed` (a destination failure keeps the file and its link).",
    }),
    trigger: z.enum(runTriggers),
    from: timestamp().openapi({ description: "Start of the period (inclusive)." }),
    to: timestamp().openapi({ description: "End of the period (exclusive)." }),
    format: z.enum(reportFormats),
    rows: integer(0, Number.MAX_SAFE_INTEGER).nullable(),
    bytes: integer(0, Number.MAX_SAFE_INTEGER).nullable(),
    created_at: timestamp(),
    started_at: timestamp().nullable(),
    completed_at: timestamp().nullable(),
    error: text(1000).nullable(),
    download_url: z
      .url()
      .max(2048)
      .nullable()
      .openapi({ description: "Signed, valid 1 hour, no API key needed; present while the file exists." }),
    download_expires_at: timestamp().nullable(),
  })
  .openapi("ReportRun");

/** A run without its link: in lists, and as the `data` of `report_run.completed` / `report_run.failed` events. */
export const reportRunSummarySchema = reportRunSchema
  .omit({ download_url: true, download_expires_at: true })
  .openapi("ReportRunSummary");

export const reportWithRunsSchema = reportSchema
  .extend({
    recent_runs: z
      .array(reportRunSummarySchema)
      .max(5)
      .openapi({ description: "The latest runs, newest first (read a run for its download link)." }),
  })
  .openapi("ReportWithRuns");

export const runAcceptedSchema = z
  .object({ run_id: id("run"), status: z.literal("queued") })
  .openapi("ReportRunAccepted");

function presentDestination(destination: StoredDestination): z.infer<typeof storedDestinationSchema> {
  switch (destination.type) {
    case "email":
    case "webhook":
      return destination;
    case "s3":
      return {
        type: "s3",
        bucket: destination.bucket,
        prefix: destination.prefix,
        role_arn: destination.roleArn,
        region: destination.region,
      };
    case "gcs":
      return {
        type: "gcs",
        bucket: destination.bucket,
        prefix: destination.prefix,
        service_account_email: destination.serviceAccountEmail,
      };
  }
}

export function presentReport(report: ReportRow): z.infer<typeof reportSchema> {
  return {
    id: report.id,
    name: report.name,
    type: report.type,
    filters: {
      ...(report.filters.products ? { products: report.filters.products } : {}),
      ...(report.filters.subuserIds ? { subusers: report.filters.subuserIds } : {}),
      ...(report.filters.groupBy ? { group_by: report.filters.groupBy } : {}),
    },
    schedule: report.schedule,
    next_run_at: report.nextRunAt === null ? null : toIso(report.nextRunAt),
    format: report.format,
    destination: presentDestination(report.destination),
    created_at: toIso(report.createdAt),
    updated_at: toIso(report.updatedAt),
  };
}

/** The run as `GET /reports/runs/{id}` shows it (the domain's payload, checked against the schema here). */
export const presentRun: (
  run: ReportRunRow,
  link?: { url: string; expiresAt: number } | null,
) => z.infer<typeof reportRunSchema> = runPayload;

export const presentRunSummary: (run: ReportRunRow) => z.infer<typeof reportRunSummarySchema> = runSummaryPayload;

export function presentReportWithRuns(report: ReportRow & { recentRuns: ReportRunRow[] }) {
  return { ...presentReport(report), recent_runs: report.recentRuns.map(presentRunSummary) };
}

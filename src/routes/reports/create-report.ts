import { type RouteHandler, z } from "@hono/zod-openapi";
import { reportFormats, reportTypes } from "../../db/schema";
import { createReport } from "../../domain/reports/definitions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  destinationSchema,
  filtersSchema,
  presentReport,
  reportNameSchema,
  reportSchema,
  scheduleSchema,
  toDestinationInput,
  toFilters,
} from "../../resources/report";
import { REPORT_ERRORS, REPORT_WRITE_ERRORS } from "./errors";

const body = z
  .strictObject({
    name: reportNameSchema,
    type: z.enum(reportTypes).openapi({
      description:
        "`traffic` (bytes per sub-user, product and day), `requests` (the sampled log), `invoices` (ledger lines " +
        "with their order/subscription/batch), `subusers` (inventory snapshot), `isp_batches` (every IP with its " +
        "health: requests, error rate, last seen).",
    }),
    filters: filtersSchema.default({}),
    schedule: scheduleSchema.optional(),
    format: z.enum(reportFormats).openapi({
      description: "`csv` (RFC 4180, header row), `tsv`, `json` (newline-delimited), `parquet` (s3 and gcs only).",
    }),
    destination: destinationSchema(true),
  })
  .openapi("ReportCreate", {
    example: {
      name: "Weekly traffic",
      type: "traffic",
      filters: { products: ["residential"] },
      schedule: "0 6 * * 1",
      format: "csv",
      destination: { type: "email", email: "ops@example.com" },
    },
  });

export const route = apiRoute({
  operationId: "createReport",
  method: "post",
  path: "/reports",
  tags: ["Reports"],
  summary: "Create a report",
  description:
    "Pro plan or above. A `webhook` destination is checked first with a signed `webhook.test` delivery (422 " +
    "`destination_unreachable` unless it answers 2xx). Its `signing_secret` is write-only.",
  request: { body: jsonBody(body) },
  errors: [...REPORT_ERRORS, ...REPORT_WRITE_ERRORS],
  responses: { 201: jsonContent(reportSchema, "The report definition.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const report = await createReport(c.get("ctx"), c.get("principal"), {
    name: input.name,
    type: input.type,
    filters: toFilters(input.filters),
    schedule: input.schedule,
    format: input.format,
    destination: toDestinationInput(input.destination),
  });
  return c.json(presentReport(report), 201);
};

import { type RouteHandler, z } from "@hono/zod-openapi";
import { reportFormats } from "../../db/schema";
import { updateReport } from "../../domain/reports/definitions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import {
  destinationSchema,
  filtersSchema,
  presentReport,
  reportIdParam,
  reportNameSchema,
  reportSchema,
  scheduleSchema,
  toDestinationInput,
  toFilters,
} from "../../resources/report";
import { REPORT_ERRORS, REPORT_WRITE_ERRORS } from "./errors";

const body = z
  .strictObject({
    name: reportNameSchema.optional(),
    filters: filtersSchema.optional().openapi({ description: "Replaces the filters." }),
    schedule: scheduleSchema.optional().openapi({ description: "A new cron schedule; null makes it on-demand." }),
    format: z.enum(reportFormats).optional(),
    destination: destinationSchema(false)
      .optional()
      .openapi({ description: "Replaces the destination (a webhook keeps its secret unless a new one is given)." }),
  })
  .openapi("ReportUpdate", { example: { schedule: null } });

export const route = apiRoute({
  operationId: "updateReport",
  method: "patch",
  path: "/reports/{id}",
  tags: ["Reports"],
  summary: "Update a report",
  description:
    "`name`, `filters`, `schedule` (null: on demand), `format` and `destination`; the type is fixed. A new " +
    "`webhook` destination is checked with a signed test delivery first.",
  request: { params: reportIdParam, body: jsonBody(body) },
  errors: [...REPORT_ERRORS, ...REPORT_WRITE_ERRORS, "report_not_found"],
  responses: { 200: jsonContent(reportSchema, "The updated report.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { filters, destination, ...patch } = c.req.valid("json");
  const report = await updateReport(c.get("ctx"), c.get("principal"), c.req.valid("param").id, {
    ...patch,
    ...(filters ? { filters: toFilters(filters) } : {}),
    ...(destination ? { destination: toDestinationInput(destination) } : {}),
  });
  return c.json(presentReport(report), 200);
};

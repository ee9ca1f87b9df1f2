import type { RouteHandler } from "@hono/zod-openapi";
import { findReport } from "../../domain/reports/definitions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentReport, reportIdParam, reportSchema } from "../../resources/report";
import { REPORT_ERRORS } from "./errors";

export const route = apiRoute({
  operationId: "getReport",
  method: "get",
  path: "/reports/{id}",
  tags: ["Reports"],
  summary: "Get a report definition",
  description: "The definition with its schedule's `next_run_at`; a destination's secret is never shown.",
  request: { params: reportIdParam },
  errors: [...REPORT_ERRORS, "report_not_found"],
  responses: { 200: jsonContent(reportSchema, "The report definition.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const report = await findReport(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json(presentReport(report), 200);
};

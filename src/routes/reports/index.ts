import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createReport from "./create-report";
import * as deleteReport from "./delete-report";
import * as getReport from "./get-report";
import * as getReportRun from "./get-report-run";
import * as listReports from "./list-reports";
import * as runReport from "./run-report";
import * as updateReport from "./update-report";

export function reportRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listReports.route, listReports.handler);
  app.openapi(createReport.route, createReport.handler);
  app.openapi(getReportRun.route, getReportRun.handler);
  app.openapi(getReport.route, getReport.handler);
  app.openapi(updateReport.route, updateReport.handler);
  app.openapi(deleteReport.route, deleteReport.handler);
  app.openapi(runReport.route, runReport.handler);
}

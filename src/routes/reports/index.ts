import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { assertPlanAtLeast } from "../../domain/plans";
import type { AppEnv } from "../../env";
import * as createReport from "./create-report";
import * as deleteReport from "./delete-report";
import * as getReport from "./get-report";
import * as getReportRun from "./get-report-run";
import * as listReports from "./list-reports";
import * as runReport from "./run-report";
import * as updateReport from "./update-report";

/** Reports need the Pro plan or above: checked before anything else, so a lower plan gets 403 whatever it sends. */
const reportsPlanGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  assertPlanAtLeast(c.var.principal, "pro", "Reports");
  await next();
};

export function reportRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/reports", reportsPlanGate);
  app.use("/reports/*", reportsPlanGate);
  app.openapi(listReports.route, listReports.handler);
  app.openapi(createReport.route, createReport.handler);
  app.openapi(getReportRun.route, getReportRun.handler);
  app.openapi(getReport.route, getReport.handler);
  app.openapi(updateReport.route, updateReport.handler);
  app.openapi(deleteReport.route, deleteReport.handler);
  app.openapi(runReport.route, runReport.handler);
}

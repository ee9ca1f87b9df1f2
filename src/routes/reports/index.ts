import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { clientAddressLimit } from "../../middleware/api-key-auth";
import { validationHook } from "../../platform/validation";
import * as createReport from "./create-report";
import * as deleteReport from "./delete-report";
import * as downloadReportFile from "./download-report-file";
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
  // Documented with the version's operations; served by `reportLinkRoutes`, ahead of API-key auth.
  app.openAPIRegistry.registerPath(downloadReportFile.route);
}

/**
 * The routes a signed link authorizes (a report file's download): mounted at the version's base before its API-key
 * auth and before its sunset, so links already sent by mail or webhook work until they expire.
 */
export function reportLinkRoutes(): OpenAPIHono<AppEnv> {
  const links = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  links.use(downloadReportFile.route.getRoutingPath(), clientAddressLimit);
  links.openapi(downloadReportFile.route, downloadReportFile.handler);
  return links;
}

import type { RouteHandler } from "@hono/zod-openapi";
import { listReports } from "../../domain/reports/definitions";
import type { AppEnv } from "../../env";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentReportWithRuns, reportWithRunsSchema } from "../../resources/report";
import { REPORT_ERRORS } from "./errors";

export const route = apiRoute({
  operationId: "listReports",
  method: "get",
  path: "/reports",
  tags: ["Reports"],
  summary: "List reports with their recent runs",
  description: "The account's report definitions, newest first, each with its latest 5 runs.",
  request: { query: paginationQuery },
  paginated: true,
  errors: [...REPORT_ERRORS, "invalid_request"],
  responses: { 200: jsonContent(pageSchema(reportWithRunsSchema), "A page of reports.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const query = c.req.valid("query");
  const rows = await listReports(c.get("ctx"), c.get("principal"), query);
  return c.json(toPage(c, rows, query.limit, presentReportWithRuns), 200);
};

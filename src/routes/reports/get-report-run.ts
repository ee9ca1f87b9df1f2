import type { RouteHandler } from "@hono/zod-openapi";
import { signDownloadLink } from "../../domain/reports/download-link";
import { findRun } from "../../domain/reports/runs";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { presentRun, reportRunSchema, runIdParam } from "../../resources/report";
import { REPORT_ERRORS } from "./errors";

export const route = apiRoute({
  operationId: "getReportRun",
  method: "get",
  path: "/reports/runs/{id}",
  tags: ["Reports"],
  summary: "Get a report run",
  description:
    "While the file exists (a completed run, or a run whose destination failed), `download_url` is a fresh link " +
    "valid for 1 hour that needs no API key; after it expires it answers 410 `download_link_expired`, and a " +
    "tampered one 403 `download_link_invalid`. Runs and files are deleted after 90 days.",
  request: { params: runIdParam },
  errors: [...REPORT_ERRORS, "report_run_not_found"],
  responses: { 200: jsonContent(reportRunSchema, "The run.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const run = await findRun(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  const finished = run.status === "completed" || run.status === "failed";
  const origin = new URL(c.req.url).origin;
  const link = finished && run.fileKey ? await signDownloadLink(c.env, run.id, origin) : null;
  return c.json(presentRun(run, link), 200);
};

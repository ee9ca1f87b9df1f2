import { type RouteHandler, z } from "@hono/zod-openapi";
import { requestRun } from "../../domain/reports/runs";
import type { AppEnv } from "../../env";
import { token } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { reportIdParam, runAcceptedSchema } from "../../resources/report";
import { REPORT_ERRORS } from "./errors";

function date() {
  return token(/^\d{4}-\d{2}-\d{2}$/, 10, "must be a date (YYYY-MM-DD)")
    .transform((value, context) => {
      const ms = Date.parse(`${value}T00:00:00Z`);
      if (Number.isFinite(ms) && new Date(ms).toISOString().startsWith(value)) return ms;
      context.addIssue({ code: "custom", message: "is not a valid date" });
      return z.NEVER;
    })
    .openapi({ example: "2026-11-01" });
}

const body = z
  .strictObject({
    from: date().openapi({ description: "First UTC day, at most 90 days back." }),
    to: date().openapi({ description: "Last UTC day (inclusive), not after today; `from` ≤ `to`." }),
  })
  .openapi("ReportRunCreate", { example: { from: "2026-11-01", to: "2026-11-07" } });

export const route = apiRoute({
  operationId: "runReport",
  method: "post",
  path: "/reports/{id}/run",
  tags: ["Reports"],
  summary: "Run a report now",
  description:
    "Covers whole UTC days `from` through `to` (the run's period is `[from 00:00Z, to + 1 day 00:00Z)`). The " +
    "work leaves the request through a queue: poll `GET /reports/runs/{id}`.",
  request: { params: reportIdParam, body: jsonBody(body) },
  errors: [...REPORT_ERRORS, "report_not_found"],
  responses: { 202: jsonContent(runAcceptedSchema, "The run, queued.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const run = await requestRun(c.get("ctx"), c.get("principal"), c.req.valid("param").id, c.req.valid("json"));
  return c.json({ run_id: run.id, status: "queued" as const }, 202);
};

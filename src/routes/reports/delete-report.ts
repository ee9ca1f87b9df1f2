import type { RouteHandler } from "@hono/zod-openapi";
import { deleteReport } from "../../domain/reports/definitions";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { deletedSchema } from "../../resources/common";
import { reportIdParam } from "../../resources/report";
import { REPORT_ERRORS } from "./errors";

export const route = apiRoute({
  operationId: "deleteReport",
  method: "delete",
  path: "/reports/{id}",
  tags: ["Reports"],
  summary: "Delete a report",
  description: "No further scheduled runs. Its runs and their files stay readable until their 90 days are over.",
  request: { params: reportIdParam },
  errors: [...REPORT_ERRORS, "report_not_found"],
  responses: { 200: jsonContent(deletedSchema, "Deleted.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const report = await deleteReport(c.get("ctx"), c.get("principal"), c.req.valid("param").id);
  return c.json({ id: report.id, deleted: true as const }, 200);
};

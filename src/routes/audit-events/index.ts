import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as listAuditEvents from "./list-audit-events";

export function auditEventRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listAuditEvents.route, listAuditEvents.handler);
}

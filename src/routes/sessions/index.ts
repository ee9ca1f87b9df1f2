import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as getSession from "./get-session";
import * as listSessions from "./list-sessions";
import * as terminateSession from "./terminate-session";

export function sessionRoutes(app: OpenAPIHono<AppEnv>): void {
  for (const { route, handler } of listSessions.operations) app.openapi(route, handler);
  for (const { route, handler } of getSession.operations) app.openapi(route, handler);
  for (const { route, handler } of terminateSession.operations) app.openapi(route, handler);
}

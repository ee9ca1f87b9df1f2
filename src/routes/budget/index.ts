import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as deleteBudget from "./delete-budget";
import * as getBudget from "./get-budget";
import * as setBudget from "./set-budget";

export function budgetRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getBudget.route, getBudget.handler);
  app.openapi(setBudget.route, setBudget.handler);
  app.openapi(deleteBudget.route, deleteBudget.handler);
}

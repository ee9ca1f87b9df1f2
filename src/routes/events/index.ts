import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as getEvent from "./get-event";
import * as listEvents from "./list-events";
import { registerEventWebhooks } from "./webhook-payloads";

export function eventRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listEvents.route, listEvents.handler);
  app.openapi(getEvent.route, getEvent.handler);
  registerEventWebhooks(app);
}

import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as getTraffic from "./get-traffic";
import * as listRequests from "./list-requests";
import * as tailRequests from "./tail-requests";

export function trafficRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getTraffic.route, getTraffic.handler);
  app.openapi(listRequests.route, listRequests.handler);
  app.openapi(tailRequests.route, tailRequests.handler);
}

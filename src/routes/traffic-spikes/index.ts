import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as acknowledgeTrafficSpike from "./acknowledge-traffic-spike";
import * as listTrafficSpikes from "./list-traffic-spikes";

export function trafficSpikeRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listTrafficSpikes.route, listTrafficSpikes.handler);
  app.openapi(acknowledgeTrafficSpike.route, acknowledgeTrafficSpike.handler);
}

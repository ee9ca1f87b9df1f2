import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { decodeBody } from "../../middleware/content-encoding";
import { gatewayAuth } from "../../middleware/gateway-auth";
import { jsonBody } from "../../middleware/json-body";
import { validationHook } from "../../platform/validation";
import * as authorize from "./authorize-proxy-request";
import * as nodeSnapshots from "./get-node-snapshots";
import * as pinSession from "./pin-node-session";
import * as release from "./release-lease";
import * as renewLeases from "./renew-node-leases";
import * as reportUsage from "./report-usage";
import * as subscribeChanges from "./subscribe-changes";

/** The small contract the proxy gateway calls, with a node's credential (docs/gateway.md). */
export function gatewayApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  app.use("*", gatewayAuth, decodeBody, jsonBody);
  app.openapi(authorize.route, authorize.handler);
  app.openapi(release.route, release.handler);
  app.openapi(nodeSnapshots.route, nodeSnapshots.handler);
  app.openapi(renewLeases.route, renewLeases.handler);
  app.openapi(pinSession.route, pinSession.handler);
  app.openapi(subscribeChanges.route, subscribeChanges.handler);
  // Documented like the others; its handler validates the body itself (report-usage.ts).
  app.openAPIRegistry.registerPath(reportUsage.route);
  app.post(reportUsage.route.path, reportUsage.handler);
  return app;
}

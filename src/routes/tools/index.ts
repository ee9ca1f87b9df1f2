import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as getGateway from "./get-gateway";
import * as getProxyTest from "./get-proxy-test";
import * as listProxyTests from "./list-proxy-tests";
import * as runProxyTest from "./run-proxy-test";

export function toolRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(getGateway.route, getGateway.handler);
  app.openapi(runProxyTest.route, runProxyTest.handler);
  app.openapi(listProxyTests.route, listProxyTests.handler);
  app.openapi(getProxyTest.route, getProxyTest.handler);
}

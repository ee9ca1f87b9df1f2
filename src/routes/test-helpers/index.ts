import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as expireTestBatch from "./expire-test-batch";
import * as generateTestTraffic from "./generate-test-traffic";
import * as renewTestSubscription from "./renew-test-subscription";
import * as startTestSession from "./start-test-session";
import * as topUpTestBalance from "./top-up-test-balance";

/** `/test-helpers/…`: make the outside world happen in the sandbox (sandbox keys only: each is `sandboxOnly`). */
export function testHelperRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(generateTestTraffic.route, generateTestTraffic.handler);
  app.openapi(startTestSession.route, startTestSession.handler);
  app.openapi(expireTestBatch.route, expireTestBatch.handler);
  app.openapi(renewTestSubscription.route, renewTestSubscription.handler);
  app.openapi(topUpTestBalance.route, topUpTestBalance.handler);
}

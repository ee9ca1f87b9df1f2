import type { OpenAPIHono } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { assertSandbox } from "../../domain/sandbox/twins";
import type { AppEnv } from "../../env";
import * as expireTestBatch from "./expire-test-batch";
import * as generateTestTraffic from "./generate-test-traffic";
import * as renewTestSubscription from "./renew-test-subscription";
import * as startTestSession from "./start-test-session";
import * as topUpTestBalance from "./top-up-test-balance";

/** A live key is refused before anything else, its request not even validated: the helpers do not exist for it. */
const sandboxOnly = createMiddleware<AppEnv>(async (c, next) => {
  assertSandbox(c.get("principal"));
  await next();
});

/** `/test-helpers/…`: make the outside world happen in the sandbox (sandbox keys only). */
export function testHelperRoutes(app: OpenAPIHono<AppEnv>): void {
  app.use("/test-helpers/*", sandboxOnly);
  app.openapi(generateTestTraffic.route, generateTestTraffic.handler);
  app.openapi(startTestSession.route, startTestSession.handler);
  app.openapi(expireTestBatch.route, expireTestBatch.handler);
  app.openapi(renewTestSubscription.route, renewTestSubscription.handler);
  app.openapi(topUpTestBalance.route, topUpTestBalance.handler);
}

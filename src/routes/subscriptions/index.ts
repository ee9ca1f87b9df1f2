import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as cancelSubscription from "./cancel-subscription";
import * as createSubscription from "./create-subscription";
import * as getSubscription from "./get-subscription";
import * as listSubscriptions from "./list-subscriptions";
import * as pauseSubscription from "./pause-subscription";
import * as updateSubscription from "./update-subscription";

export function subscriptionRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listSubscriptions.route, listSubscriptions.handler);
  app.openapi(createSubscription.route, createSubscription.handler);
  app.openapi(getSubscription.route, getSubscription.handler);
  app.openapi(updateSubscription.route, updateSubscription.handler);
  app.openapi(pauseSubscription.route, pauseSubscription.handler);
  app.openapi(cancelSubscription.route, cancelSubscription.handler);
}

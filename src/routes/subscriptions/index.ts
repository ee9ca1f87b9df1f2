import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import * as createSubscription from "./create-subscription";
import * as getSubscription from "./get-subscription";
import * as listSubscriptions from "./list-subscriptions";
import * as transitions from "./transitions";
import * as updateSubscription from "./update-subscription";

export function subscriptionRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listSubscriptions.route, listSubscriptions.handler);
  app.openapi(createSubscription.route, createSubscription.handler);
  app.openapi(getSubscription.route, getSubscription.handler);
  app.openapi(updateSubscription.route, updateSubscription.handler);
  app.openapi(transitions.pauseRoute, transitions.pause);
  app.openapi(transitions.cancelRoute, transitions.cancel);
}

import { OpenAPIHono } from "@hono/zod-openapi";
import { documentOf, publicApi } from "../api-docs/document";
import type { AppEnv } from "../env";
import { authenticate } from "../middleware/authenticate";
import { jsonBody } from "../middleware/json-body";
import { keyGuard } from "../middleware/key-guard";
import { livemodeField } from "../middleware/livemode";
import { dispatchWebhooksAfterWrites } from "../middleware/webhook-dispatch";
import { validationHook } from "../platform/validation";
import { apiKeyRoutes } from "./api-keys";
import { auditEventRoutes } from "./audit-events";
import { authRoutes } from "./auth";
import * as bandwidthBalance from "./balance/get-bandwidth-balance";
import { budgetRoutes } from "./budget";
import { eventRoutes } from "./events";
import { ispRoutes } from "./isp";
import { memberRoutes } from "./members";
import { oauthGrantRoutes } from "./oauth-grants";
import { orderRoutes } from "./orders";
import { reportRoutes } from "./reports";
import { sessionRoutes } from "./sessions";
import { subscriptionRoutes } from "./subscriptions";
import { subuserRoutes } from "./subusers";
import { testHelperRoutes } from "./test-helpers";
import { toolRoutes } from "./tools";
import { trafficRoutes } from "./traffic";
import { trafficSpikeRoutes } from "./traffic-spikes";
import { usersRoutes } from "./users";
import { webhookEndpointRoutes } from "./webhook-endpoints";
import { whitelistRoutes } from "./whitelists";

/**
 * The public API, mounted at `/v1`: auth (an API key, or a member's session cookie) → the caller's guard → JSON
 * bodies → the operations.
 */
export function publicRouter() {
  const v1 = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const document = documentOf(v1, publicApi);
  v1.use("*", authenticate, livemodeField, keyGuard, jsonBody);
  v1.use("*", dispatchWebhooksAfterWrites);
  usersRoutes(v1);
  subuserRoutes(v1);
  whitelistRoutes(v1);
  orderRoutes(v1);
  ispRoutes(v1);
  subscriptionRoutes(v1);
  sessionRoutes(v1);
  trafficRoutes(v1);
  reportRoutes(v1);
  webhookEndpointRoutes(v1);
  eventRoutes(v1);
  apiKeyRoutes(v1);
  auditEventRoutes(v1);
  toolRoutes(v1);
  testHelperRoutes(v1);
  trafficSpikeRoutes(v1);
  v1.openapi(bandwidthBalance.route, bandwidthBalance.handler);
  budgetRoutes(v1);
  memberRoutes(v1);
  authRoutes(v1);
  oauthGrantRoutes(v1);
  return { router: v1, document };
}

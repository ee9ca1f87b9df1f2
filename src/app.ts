import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { adminApp } from "./internal/admin";
import { gatewayApp } from "./internal/gateway";
import { apiKeyAuth } from "./middleware/api-key-auth";
import { jsonBody } from "./middleware/json-body";
import { keyGuard } from "./middleware/key-guard";
import { requestId } from "./middleware/request-id";
import { docsPage } from "./openapi/docs-page";
import { openApiDocument } from "./openapi/document";
import { handleError, notFoundHandler } from "./platform/error-handler";
import { validationHook } from "./platform/validation";
import * as bandwidthBalance from "./routes/balance/get-bandwidth-balance";
import { ispRoutes } from "./routes/isp";
import { orderRoutes } from "./routes/orders";
import { subscriptionRoutes } from "./routes/subscriptions";
import { subuserRoutes } from "./routes/subusers";
import * as postman from "./routes/tools/postman-collection";
import { usersRoutes } from "./routes/users";
import { whitelistRoutes } from "./routes/whitelists";

/**
 * The request path: request id → (public docs | admin auth | API-key auth → per-key guard → JSON body)
 * → route validation → domain verb. Errors thrown anywhere are rendered by `handleError`.
 */
export function createApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const document = (origin: string) => openApiDocument(app, origin);

  app.use("*", requestId);
  app.get("/healthz", (c) => c.json({ ok: true }));

  // Public, token-free: the machine-readable description and its docs page.
  app.get("/v1/openapi.json", (c) => c.json(document(new URL(c.req.url).origin)));
  app.get("/v1/docs", (c) => c.html(docsPage("/v1/openapi.json")));

  app.route("/internal/admin", adminApp());
  app.route("/internal/gateway", gatewayApp());

  const v1 = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  v1.use("*", apiKeyAuth, keyGuard, jsonBody);
  usersRoutes(v1);
  subuserRoutes(v1);
  whitelistRoutes(v1);
  orderRoutes(v1);
  ispRoutes(v1);
  subscriptionRoutes(v1);
  v1.openapi(bandwidthBalance.route, bandwidthBalance.handler);
  v1.openapi(postman.route, postman.handler(document));
  app.route("/v1", v1);

  app.notFound(notFoundHandler(() => app.routes));
  app.onError(handleError);
  return app;
}

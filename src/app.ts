import { OpenAPIHono } from "@hono/zod-openapi";
import { errorCodesPage } from "./api-docs/error-page";
import {
  API_VERSIONS,
  type ApiVersion,
  buildVersion,
  closeAtSunset,
  currentVersion,
  deprecationNotices,
  serveDescriptions,
} from "./api-versions";
import type { AppEnv } from "./env";
import { internalRouter } from "./internal";
import { mcpRouter } from "./mcp";
import { withDomainContext } from "./middleware/domain-context";
import { internalAuth } from "./middleware/internal-auth";
import { delegatedRequest } from "./middleware/oauth-auth";
import { requestId } from "./middleware/request-id";
import { handleError, notFoundHandler } from "./platform/error-handler";
import { ERROR_DOCS_PATH } from "./platform/errors";
import { validationHook } from "./platform/validation";
import { publicAuthRoutes } from "./routes/auth";
import { oauthRoutes } from "./routes/oauth";
import { reportLinkRoutes } from "./routes/reports";

/**
 * The request path: request id → domain context → (public docs | sign-in | a sunset version's 410 | internal auth |
 * API-key or session auth → the caller's guard → JSON body) → route validation → domain verb. Errors thrown anywhere are rendered by
 * `handleError`. `/mcp` (the MCP server) turns each tool call into such a request and runs it through this app.
 */
export function createApp(versions: readonly ApiVersion[] = API_VERSIONS): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const publicVersions = versions.map(buildVersion);
  const internal = internalRouter();
  const originOf = (url: string) => new URL(url).origin;

  app.use("*", requestId, withDomainContext, deprecationNotices(versions));
  app.get("/healthz", (c) => c.json({ ok: true }));
  app.get(ERROR_DOCS_PATH, (c) => c.html(errorCodesPage()));

  // Each version's description, its docs page and its Postman collection need no token (they hold no secret, and
  // `newman run <url>` cannot send one); the internal description needs the admin token.
  for (const version of publicVersions) serveDescriptions(app, version);
  // A report file's signed link works without a token (it carries its own HMAC and expiry), and past v1's sunset
  // too: links already sent by email and webhooks stay good until they expire.
  app.route("/v1", reportLinkRoutes());
  // Sign-in, accepting an invitation and password resets hold no credential yet: ahead of the version's auth.
  app.route("/v1", publicAuthRoutes());
  // OAuth for `/mcp`: discovery, registration, tokens and the consent page (no API version: clients find them by
  // the well-known paths).
  app.route("/", oauthRoutes());
  // From a version's sunset on, everything else under it answers 410 `version_sunset`, before auth and rate limits.
  for (const version of publicVersions) closeAtSunset(app, version);
  app.get("/internal/openapi.json", internalAuth("ADMIN_TOKEN"), (c) => c.json(internal.document(originOf(c.req.url))));

  for (const version of publicVersions) app.route(`/${version.name}`, version.router);
  app.route("/internal", internal.router);
  // The MCP server's tools are the current version's operations, each call dispatched through this app.
  app.route(
    "/mcp",
    mcpRouter(currentVersion(publicVersions), async (request, c) =>
      app.fetch(delegatedRequest(request, c.get("caller")), c.env, c.executionCtx),
    ),
  );

  app.notFound(notFoundHandler(() => app.routes));
  app.onError(handleError);
  return app;
}

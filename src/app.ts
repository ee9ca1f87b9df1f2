import { OpenAPIHono } from "@hono/zod-openapi";
import { docsPage } from "./api-docs/docs-page";
import { postmanCollection } from "./api-docs/postman";
import type { AppEnv } from "./env";
import { internalRouter } from "./internal";
import { withDomainContext } from "./middleware/domain-context";
import { internalAuth } from "./middleware/internal-auth";
import { requestId } from "./middleware/request-id";
import { handleError, notFoundHandler } from "./platform/error-handler";
import { validationHook } from "./platform/validation";
import { publicRouter } from "./routes";

/**
 * The request path: request id → domain context → (public docs | internal auth | API-key auth → per-key guard →
 * JSON body) → route validation → domain verb. Errors thrown anywhere are rendered by `handleError`.
 */
export function createApp(): OpenAPIHono<AppEnv> {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const v1 = publicRouter();
  const internal = internalRouter();
  const originOf = (url: string) => new URL(url).origin;

  app.use("*", requestId, withDomainContext);
  app.get("/healthz", (c) => c.json({ ok: true }));

  // The public description, its docs page and its Postman collection need no token (they hold no secret, and
  // `newman run <url>` cannot send one); the internal description needs the admin token.
  app.get("/v1/openapi.json", (c) => c.json(v1.document(originOf(c.req.url))));
  app.get("/v1/docs", (c) => c.html(docsPage("/v1/openapi.json")));
  app.get("/v1/postman/collection.json", (c) => {
    const origin = originOf(c.req.url);
    return c.json(postmanCollection(v1.document(origin), `${origin}/v1`));
  });
  app.get("/internal/openapi.json", internalAuth("ADMIN_TOKEN"), (c) => c.json(internal.document(originOf(c.req.url))));

  app.route("/v1", v1.router);
  app.route("/internal", internal.router);

  app.notFound(notFoundHandler(() => app.routes));
  app.onError(handleError);
  return app;
}

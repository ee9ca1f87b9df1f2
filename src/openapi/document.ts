import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";

type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

const documents = new Map<string, OpenApiDocument>();

/** The OpenAPI 3.1 description of every route, generated once per origin from the routes' zod schemas. */
export function openApiDocument(app: OpenAPIHono<AppEnv>, origin: string): OpenApiDocument {
  let document = documents.get(origin);
  if (!document) {
    registerSecuritySchemes(app);
    document = app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Proxy Account API",
        version: "1.0.0",
        description:
          "Manage a proxy-access account programmatically: sub-users, orders, ISP batches, subscriptions, whitelists, " +
          "sticky sessions, traffic analytics and reports.\n\n" +
          "Every error is `{code, message, request_id}`; every response carries `X-Request-Id`. Lists are cursor-paginated " +
          "(`cursor`, `limit` ≤ 200, default 50) with `next_cursor` and a `Link` header. Writes accept `Idempotency-Key`.",
      },
      servers: [{ url: origin, description: "This deployment" }],
      tags: [
        { name: "Account", description: "The account that owns the API key." },
        { name: "Sub-users", description: "The unit of access control on the gateway." },
        { name: "Whitelists", description: "Source IPs that may use a sub-user without a password." },
        { name: "Orders", description: "Bandwidth and ISP orders, and the bandwidth pools they fill." },
        { name: "ISP", description: "Static IP inventory, batches, their IPs and whitelists." },
        { name: "Subscriptions", description: "Recurring bandwidth tiers and ISP auto-renewal." },
        { name: "Tools", description: "Specification files and tools." },
        {
          name: "Internal: admin",
          description: "Operators and dashboard only; `Authorization: Bearer <ADMIN_TOKEN>`.",
        },
      ],
    });
    documents.set(origin, document);
  }
  return document;
}

let registered = false;

function registerSecuritySchemes(app: OpenAPIHono<AppEnv>): void {
  if (registered) return;
  registered = true;
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "http",
    scheme: "bearer",
    description: "An API key issued in the dashboard: `Authorization: Bearer live_…`.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "AdminToken", { type: "http", scheme: "bearer" });
  app.openAPIRegistry.registerComponent("securitySchemes", "GatewayToken", { type: "http", scheme: "bearer" });
}

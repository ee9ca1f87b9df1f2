import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../platform/pagination";
import { registerSharedComponents } from "../platform/route-definitions";

export type OpenApiDocument = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;

/** What a document says about the routers it describes. */
interface DocumentSpec {
  title: string;
  description: string;
  /** Where the described routers are mounted (the server URL is the origin plus this). */
  basePath: string;
  internal: boolean;
  tags: Array<{ name: string; description: string }>;
  securitySchemes: Record<string, string | { in: "query" | "cookie"; name: string; description: string }>;
}

export const publicApi: DocumentSpec = {
  title: "Proxy Account API",
  basePath: "/v1",
  internal: false,
  description:
    "Manage a proxy-access account programmatically: the account and its MFA, sub-users, their whitelists, orders " +
    "and bandwidth pools, ISP inventory and batches, subscriptions, sticky sessions, traffic analytics and the " +
    "sampled request log; scheduled and on-demand reports delivered to email, webhooks, S3 and GCS; webhook " +
    "endpoints signed per Standard Webhooks, with the account's events and their delivery log; a proxy test " +
    "that sends a real request through the gateway with a sub-user's credentials; order quotes and usage " +
    "forecasts; the account's API keys, with scopes, expiry and rotation; and an audit log of every change.\n\n" +
    "Every call carries `Authorization: Bearer <API_KEY>` (or, from a browser, a member's session cookie and, on " +
    "changes, its `X-CSRF-Token`); each operation names the key scope it needs " +
    "(`area:read` or `area:write`, which a member's role grants as a key's scopes do; 403 `insufficient_scope` " +
    "without it). Every error is " +
    "`{code, message, request_id, doc_url}` (`doc_url`: the code's cause and fix on /docs/errors), and every " +
    "response carries `X-Request-Id` and the `X-RateLimit-*` headers of the key's rolling 60-second and 24-hour " +
    "windows (429 `rate_limited` with `Retry-After` beyond them). Lists are cursor-paginated (`cursor`, `limit` ≤ " +
    `${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}) with \`next_cursor\` and a \`Link\` header. Writes accept ` +
    "`Idempotency-Key`; a retry replays the first response (`Idempotent-Replayed: true`). A key scoped to some " +
    "products may act only on resources of those products (403 `subuser_scope_mismatch`).\n\n" +
    "A `test_` key acts on the account's sandbox: its own sub-users, orders and traffic, simulated money and " +
    "provisioning, and the Test helpers. Every JSON object a call answers with carries `livemode` (`false` in the " +
    "sandbox).",
  tags: [
    { name: "Account", description: "The account that owns the API key, and its MFA." },
    { name: "Sub-users", description: "The unit of access control on the gateway." },
    { name: "Whitelists", description: "Source IPs that may use a sub-user without a password." },
    { name: "Orders", description: "Bandwidth and ISP orders, the bandwidth pools they fill, and the monthly budget." },
    { name: "ISP", description: "Static IP inventory, batches, their IPs and whitelists." },
    { name: "Subscriptions", description: "Recurring bandwidth tiers and ISP auto-renewal." },
    { name: "Sessions", description: "Sticky sessions of the gateway products (residential, mobile)." },
    { name: "Traffic", description: "Traffic analytics and the sampled request log." },
    {
      name: "Reports",
      description:
        "Scheduled and on-demand exports (Pro plan and above) to email, webhooks, S3 and GCS. A report spans every " +
        "product of the account: only a key without a product scope may use them (else 403 `subuser_scope_mismatch`).",
    },
    {
      name: "Tools",
      description:
        "The gateway's connection settings, and the proxy credential test: a real request through the gateway, kept 24 hours.",
    },
    {
      name: "Webhooks",
      description: "Endpoints that receive the account's events, signed per Standard Webhooks, and their delivery log.",
    },
    { name: "Events", description: "What happened on the account (30 days); the payloads webhooks deliver." },
    {
      name: "API keys",
      description:
        "The account's keys: per-area scopes (read or write), products, expiry, rotation with a grace period.",
    },
    {
      name: "Audit log",
      description: "Every change made by a key or an operator, with the fields it changed; kept one year.",
    },
    {
      name: "Members",
      description:
        "The account's people: roles (owner, admin, billing, developer, viewer) mapped onto the key scopes, and " +
        "invitations by email. Not MCP tools.",
    },
    {
      name: "Sign-in",
      description:
        "Members sign in with email and password (+ TOTP) on a session cookie; their sessions, sign-out everywhere, " +
        "their own MFA, invitations accepted and passwords reset. Not MCP tools.",
    },
    {
      name: "Connected applications",
      description:
        "AI assistants a member connected to the MCP server with OAuth (authorization code with PKCE): the scopes " +
        "granted, and revocation. Not MCP tools.",
    },
    {
      name: "Test helpers",
      description:
        "The sandbox (`test_` keys only): generate traffic, start sessions, expire batches, renew subscriptions, " +
        "top up the simulated balance.",
    },
  ],
  securitySchemes: {
    ApiKey:
      "An API key issued in the dashboard: `Authorization: Bearer live_…`, or `test_…` for the account's sandbox " +
      "(separate data, simulated money, `livemode: false` on every response).",
    SessionCookie: {
      in: "cookie",
      name: "__Host-session",
      description:
        "A signed-in member's session (`POST /auth/sign-in` sets it: `HttpOnly`, `Secure`, `SameSite=Lax`). The " +
        "member's role decides as a key's scopes would. Every change made with it sends the session's CSRF token " +
        "in `X-CSRF-Token` (else 403 `csrf_failed`).",
    },
    SignedLink: {
      in: "query",
      name: "sig",
      description:
        "A link the API signed (a report file's `download_url`): `exp` and `sig` in its query authorize it for " +
        "1 hour, without an API key.",
    },
  },
};

export const internalApi: DocumentSpec = {
  title: "Proxy Account API: internal contracts",
  basePath: "/internal",
  internal: true,
  description:
    "The contracts of the operator's own systems, outside the public API: the admin API (dashboard and operators, " +
    "`ADMIN_TOKEN`) and the gateway contract (the proxy gateway's nodes, each with its own credential). Every " +
    "response carries " +
    "`X-Request-Id`; every error is `{code, message, request_id, doc_url}`.",
  tags: [
    {
      name: "Admin",
      description: "Accounts, API keys and the price catalogue; `Authorization: Bearer <ADMIN_TOKEN>`.",
    },
    {
      name: "Gateway",
      description:
        "Access decisions, leases and usage; `Authorization: Bearer <node credential>` (`node_…`, issued per node " +
        "by `POST /internal/admin/gateway-nodes`).",
    },
  ],
  securitySchemes: {
    AdminToken: "The admin token (`ADMIN_TOKEN`), held by the dashboard and operators.",
    GatewayNode:
      "A gateway node's own credential (`node_…`), issued and revoked by the operator: every claim made with it is " +
      "bound to the node it was issued for.",
    GatewayToken:
      "The fleet's shared gateway token (`GATEWAY_TOKEN`): accepted for one release beside node credentials on the " +
      "operations that name no node; the node contract refuses it.",
  },
};

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The OpenAPI 3.1 description of a router, generated from the same zod schemas that validate its requests,
 * once per origin.
 */
export function documentOf(router: OpenAPIHono<AppEnv>, spec: DocumentSpec): (origin: string) => OpenApiDocument {
  const documents = new Map<string, OpenApiDocument>();
  let registered = false;
  return (origin) => {
    let document = documents.get(origin);
    if (!document) {
      if (!registered) registerSharedComponents(router.openAPIRegistry, spec.securitySchemes);
      registered = true;
      const local = LOCAL_HOSTS.has(new URL(origin).hostname);
      document = router.getOpenAPI31Document({
        openapi: "3.1.0",
        info: {
          title: spec.title,
          version: "1.0.0",
          description: spec.description,
          license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" } as { name: string },
        },
        servers: [
          {
            url: `${origin}${spec.basePath}`,
            description: local ? "Local development server" : "Production",
            "x-internal": spec.internal,
          } as { url: string; description: string },
        ],
        tags: spec.tags,
      });
      dropUnusedHeaders(document);
      documents.set(origin, document);
    }
    return document;
  };
}

/** Shared header components that no response of this document refers to are left out of it. */
function dropUnusedHeaders(document: OpenApiDocument): void {
  const headers = document.components?.headers;
  if (!headers) return;
  const { components: _components, ...rest } = document;
  const text = JSON.stringify(rest);
  for (const name of Object.keys(headers)) {
    if (!text.includes(`"#/components/headers/${name}"`)) delete headers[name];
  }
}

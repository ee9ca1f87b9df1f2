import { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";
import { HOUR } from "../../platform/clock";
import { oauthScopes } from "../../vocabulary";

/**
 * The OAuth 2.1 authorization server of `/mcp` (`@cloudflare/workers-oauth-provider`): discovery (RFC 8414),
 * dynamic client registration (RFC 7591), the token endpoint (authorization code with PKCE S256, refresh tokens
 * rotated at each use, revocation). Its storage is the `OAUTH_KV` namespace, hashes only. The consent page is ours
 * (`routes/oauth`), and `/mcp` checks tokens itself with `validateToken`: the library never wraps the worker's
 * `fetch`, so no other route pays for it.
 */

export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
  serverMetadata: "/.well-known/oauth-authorization-server",
  resourceMetadata: "/.well-known/oauth-protected-resource",
} as const;

/** The one protected resource: the MCP server. A token is issued for it alone (its audience). */
export const MCP_PATH = "/mcp";

const ACCESS_TOKEN_TTL_S = HOUR / 1000;
const REFRESH_TOKEN_TTL_S = (30 * 24 * HOUR) / 1000;

/**
 * The issuer is the origin the request came to (as the OpenAPI document's server is): one server per origin,
 * made once per isolate. A deployment answers on one origin; local runs on theirs.
 */
const servers = new Map<string, OAuthAuthorizationServer<Cloudflare.Env>>();
const MAX_ORIGINS = 8;

export function authorizationServer(origin: string): OAuthAuthorizationServer<Cloudflare.Env> {
  let server = servers.get(origin);
  if (server) return server;
  server = new OAuthAuthorizationServer<Cloudflare.Env>({
    issuer: origin,
    authorizeEndpoint: OAUTH_PATHS.authorize,
    tokenEndpoint: OAUTH_PATHS.token,
    clientRegistrationEndpoint: OAUTH_PATHS.register,
    resources: [mcpResource(origin)],
    defaultResource: mcpResource(origin),
    scopesSupported: oauthScopes,
    accessTokenTTL: ACCESS_TOKEN_TTL_S,
    refreshTokenTTL: REFRESH_TOKEN_TTL_S,
  });
  if (servers.size >= MAX_ORIGINS) servers.delete(servers.keys().next().value as string);
  servers.set(origin, server);
  return server;
}

export function mcpResource(origin: string): string {
  return `${origin}${MCP_PATH}`;
}

/** RFC 9728: what `/mcp` is and who issues its tokens. */
export function protectedResourceMetadata(origin: string) {
  return {
    resource: mcpResource(origin),
    authorization_servers: [origin],
    scopes_supported: oauthScopes,
    bearer_methods_supported: ["header"],
    resource_name: "Proxy account API (MCP)",
    resource_documentation: `${origin}/v1/docs`,
  };
}

/** The `resource_metadata` URL a 401 on `/mcp` points at (RFC 9728 §3.1: the resource's path after the suffix). */
export function resourceMetadataUrl(origin: string): string {
  return `${origin}${OAUTH_PATHS.resourceMetadata}${MCP_PATH}`;
}

/** The props a grant's tokens carry (encrypted in KV by the library): which grant of ours they belong to. */
export interface GrantProps {
  grantId: string;
  memberId: string;
  accountId: string;
  clientId: string;
}

/**
 * An API key is never an OAuth token: `live_…`/`test_…` bearer tokens take the key path on `/mcp`, untouched.
 */
export function isApiKeyToken(token: string): boolean {
  return token.startsWith("live_") || token.startsWith("test_");
}

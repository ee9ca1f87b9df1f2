import { type Context, Hono } from "hono";
import { authorizationServer, OAUTH_PATHS, protectedResourceMetadata } from "../../domain/oauth/provider";
import type { AppEnv } from "../../env";
import { clientAddressLimit } from "../../middleware/api-key-auth";
import { decideConsent, showConsent, signInForConsent } from "./authorize";

/**
 * OAuth 2.1 for `/mcp`, outside the versioned API: discovery (RFC 9728 and RFC 8414), dynamic client registration,
 * the token endpoint (the library's), and the consent page (ours). Calls hold no API key: each counts against its
 * client address's window, as every call without a credential does.
 */
export function oauthRoutes(): Hono<AppEnv> {
  const oauth = new Hono<AppEnv>();
  const byLibrary = (c: Context<AppEnv>) =>
    authorizationServer(new URL(c.req.url).origin).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext);
  const resourceMetadata = (c: Context<AppEnv>) => c.json(protectedResourceMetadata(new URL(c.req.url).origin));
  oauth.get(OAUTH_PATHS.resourceMetadata, resourceMetadata);
  oauth.get(`${OAUTH_PATHS.resourceMetadata}/mcp`, resourceMetadata);
  oauth.get(OAUTH_PATHS.serverMetadata, (c) => byLibrary(c));
  oauth.on(["POST", "OPTIONS"], [OAUTH_PATHS.register, OAUTH_PATHS.token], clientAddressLimit, (c) => byLibrary(c));

  oauth.get(OAUTH_PATHS.authorize, clientAddressLimit, (c) => showConsent(c));
  oauth.post(OAUTH_PATHS.authorize, clientAddressLimit, (c) => decideConsent(c));
  oauth.post(`${OAUTH_PATHS.authorize}/sign-in`, clientAddressLimit, (c) => signInForConsent(c));
  return oauth;
}

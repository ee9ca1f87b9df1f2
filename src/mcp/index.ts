import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { BuiltVersion } from "../api-versions";
import { isApiKeyToken, resourceMetadataUrl } from "../domain/oauth/provider";
import type { AppEnv } from "../env";
import { apiKeyAuth } from "../middleware/api-key-auth";
import { bearerToken } from "../middleware/bearer";
import { readAtMost } from "../middleware/content-encoding";
import { keyGuard } from "../middleware/key-guard";
import { oauthTokenAuth } from "../middleware/oauth-auth";
import { handleError } from "../platform/error-handler";
import { errorResponse, type JsonRpcMessage, parseMessage, RPC, RpcError, resultResponse } from "./json-rpc";
import { type Dispatch, mcpMethods } from "./methods";
import { eraOf, finished, type ServerInfo } from "./protocol";

/**
 * The MCP server at `/mcp` (Streamable HTTP): the public API's operations as tools, for AI assistants. Stateless:
 * one JSON-RPC message per POST, answered with one JSON response (no session, no event stream); GET and DELETE
 * answer 405. The API key is the bearer token: an unknown, revoked or expired key is HTTP 401 with a
 * `WWW-Authenticate` challenge. Each message counts against the key's rate limits as one request; a tool call
 * counts as the API request it makes.
 */

type McpEnv = { Bindings: AppEnv["Bindings"]; Variables: AppEnv["Variables"] & { message: JsonRpcMessage } };
type McpContext = Context<McpEnv>;

/** The API's middleware and error handler take the app's context; this router's only adds `message`. */
const appContext = (c: McpContext) => c as unknown as Context<AppEnv>;

const SERVER_NAME = "proxy-account-api";
/** A message is small: the largest tool call carries one request body. */
const MAX_MESSAGE_BYTES = 1_000_000;

export function mcpRouter(version: BuiltVersion, dispatch: Dispatch): Hono<McpEnv> {
  const mcp = new Hono<McpEnv>();
  const methods = mcpMethods(version, dispatch);

  mcp.use("*", async (c, next) => {
    await next();
    // Results show account data, and some a secret once.
    c.res.headers.set("Cache-Control", "no-store");
  });
  mcp.post("/", sameOrigin, acceptsJson, mcpAuth, readMessage, admitUnlessToolCall, async (c) => {
    const message = c.get("message");
    // Notifications (`notifications/initialized`, cancellations) need nothing from this stateless server.
    if (message.id === undefined) return c.body(null, 202);
    const era = eraOf(message, c.req.raw.headers);
    const origin = new URL(c.req.url).origin;
    const document = version.document(origin);
    const server: ServerInfo = { name: SERVER_NAME, title: document.info.title, version: document.info.version };
    const method = Object.hasOwn(methods, message.method) ? methods[message.method] : undefined;
    // 2026-07-28 answers an unknown method 404, so that it is told apart from a server without this endpoint.
    if (!method || (method.legacyOnly && era.modern)) {
      throw new RpcError(RPC.methodNotFound, `Method not found: ${message.method}`, era.modern ? 404 : 200);
    }
    const result = await method.run({ c: appContext(c), params: message.params, era, server, origin, document });
    return c.json(resultResponse(message.id, finished(result, era, server)));
  });

  mcp.onError(async (error, c) => {
    if (error instanceof RpcError)
      return c.json(errorResponse(c.get("message")?.id ?? null, error), error.status as 400);
    const response = await handleError(error, appContext(c));
    if (response.status === 401) response.headers.set("WWW-Authenticate", challenge(c));
    return response;
  });

  return mcp;
}

/**
 * Origin validation (DNS rebinding): a browser page may call only from the API's own origin. Clients that are not
 * browsers send no `Origin`.
 */
const sameOrigin = createMiddleware<McpEnv>(async (c, next) => {
  const origin = c.req.header("Origin");
  if (origin !== undefined && origin !== new URL(c.req.url).origin) {
    throw new RpcError(RPC.invalidRequest, `Origin ${origin} may not call this server.`, 403);
  }
  await next();
});

/** Every answer is JSON (never an event stream): a client must accept it. */
const acceptsJson = createMiddleware<McpEnv>(async (c, next) => {
  const accept = c.req.header("Accept");
  const ranges = accept?.split(",").map((range) => range.split(";")[0]?.trim().toLowerCase());
  if (ranges && !ranges.some((range) => range === "application/json" || range === "application/*" || range === "*/*")) {
    throw new RpcError(RPC.invalidRequest, "Accept must include application/json: every answer is JSON.", 406);
  }
  await next();
});

const readMessage = createMiddleware<McpEnv>(async (c, next) => {
  const mediaType = c.req.header("Content-Type")?.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/json") {
    throw new RpcError(RPC.invalidRequest, "Send the JSON-RPC message with Content-Type: application/json.", 415);
  }
  const body = c.req.raw.body ? await readAtMost(c.req.raw.body, MAX_MESSAGE_BYTES) : new Uint8Array();
  c.set("message", parseMessage(new TextDecoder().decode(body)));
  await next();
});

/**
 * Every message but a tool call is admitted by the key's guard here (revocation, expiry, rate limits; the key's
 * scopes for `tools/list`). A tool call is admitted by the API request it makes, so it counts once.
 */
const admitUnlessToolCall = createMiddleware<McpEnv>(async (c, next) => {
  if (c.get("message").method === "tools/call") return next();
  return keyGuard(appContext(c), next);
});

/**
 * Who calls: an API key (`live_…`, `test_…`: the API's own path, unchanged), or an OAuth access token issued for
 * this server (a member through a grant). Without either, 401.
 */
const mcpAuth = createMiddleware<McpEnv>(async (c, next) => {
  const token = bearerToken(c);
  if (!token || isApiKeyToken(token)) return apiKeyAuth(appContext(c), next);
  await oauthTokenAuth(appContext(c), token);
  await next();
});

/**
 * RFC 6750's challenge, pointing at the protected-resource metadata (RFC 9728), where an OAuth client finds the
 * authorization server: `invalid_token` when a token was sent, the bare scheme when none was.
 */
function challenge(c: McpContext): string {
  const metadata = `resource_metadata="${resourceMetadataUrl(new URL(c.req.url).origin)}"`;
  if (!bearerToken(c)) return `Bearer realm="mcp", ${metadata}`;
  return `Bearer realm="mcp", error="invalid_token", error_description="The token is unknown, revoked or expired.", ${metadata}`;
}

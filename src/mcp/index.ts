import { type Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { BuiltVersion } from "../api-versions";
import type { AppEnv } from "../env";
import { apiKeyAuth } from "../middleware/api-key-auth";
import { bearerToken } from "../middleware/bearer";
import { readAtMost } from "../middleware/content-encoding";
import { keyGuard } from "../middleware/key-guard";
import { handleError } from "../platform/error-handler";
import { isPlainObject } from "../platform/json";
import { callTool } from "./call";
import { errorResponse, type JsonRpcMessage, parseMessage, RPC, RpcError, resultResponse } from "./json-rpc";
import { cacheable, type Era, eraOf, finished, type ServerInfo, SUPPORTED_VERSIONS } from "./protocol";
import { documentResources } from "./resources";
import { isVisibleTo, toolsOf } from "./tools";

/**
 * The MCP server at `/mcp` (Streamable HTTP): the public API's operations as tools, for AI assistants. Stateless:
 * one JSON-RPC message per POST, answered with one JSON response (no session, no event stream); GET and DELETE
 * answer 405. The API key is the bearer token: an unknown, revoked or expired key is HTTP 401 with a
 * `WWW-Authenticate` challenge. Each message counts against the key's rate limits as one request; a tool call
 * counts as the API request it makes.
 */

type McpEnv = { Bindings: AppEnv["Bindings"]; Variables: AppEnv["Variables"] & { message: JsonRpcMessage } };
type McpContext = Context<McpEnv>;

/** Runs a request through the whole API (`app.fetch`), as if it had come from outside. */
export type Dispatch = (request: Request, c: McpContext) => Promise<Response>;

const SERVER_NAME = "proxy-account-api";
/** A message is small: the largest tool call carries one request body. */
const MAX_MESSAGE_BYTES = 1_000_000;
const TOOLS_TTL_MS = 60_000;
const DOCS_TTL_MS = 3_600_000;

const INSTRUCTIONS =
  "Each tool is one operation of the Proxy Account API, named by its operationId, acting on the account of the " +
  "API key this server was given (its sandbox, with simulated money, for a test_ key). Only the tools the key's " +
  "scopes allow are listed. Writes take `idempotency_key`; each result names the key it used: call again with it " +
  "to retry without acting twice. A refused call returns isError with the API error's code, message, doc_url (its " +
  "cause and fix) and request_id. Lists are cursor-paginated: pass a page's `next_cursor` as `cursor`. Actions " +
  "gated by MFA take `mfa_code`. Resources: the error codes and the OpenAPI document.";

export function mcpRouter(version: BuiltVersion, dispatch: Dispatch): Hono<McpEnv> {
  const mcp = new Hono<McpEnv>();
  const resources = documentResources(version);

  mcp.use("*", async (c, next) => {
    await next();
    // Results show account data, and some a secret once.
    c.res.headers.set("Cache-Control", "no-store");
  });
  mcp.post("/", sameOrigin, acceptsJson, apiKeyAuth, readMessage, admitUnlessToolCall, async (c) => {
    const message = c.get("message");
    // Notifications (`notifications/initialized`, cancellations) need nothing from this stateless server.
    if (message.id === undefined) return c.body(null, 202);
    const era = eraOf(message, c.req.raw.headers);
    const document = version.document(new URL(c.req.url).origin);
    const server: ServerInfo = { name: SERVER_NAME, title: document.info.title, version: document.info.version };
    const result = await perform(c, message, era, server);
    return c.json(resultResponse(message.id, finished(result, era, server)));
  });

  mcp.onError(async (error, c) => {
    if (error instanceof RpcError)
      return c.json(errorResponse(c.get("message")?.id ?? null, error), error.status as 400);
    const response = await handleError(error, c as unknown as Context<AppEnv>);
    if (response.status === 401) response.headers.set("WWW-Authenticate", challenge(c));
    return response;
  });

  async function perform(c: McpContext, message: JsonRpcMessage, era: Era, server: ServerInfo) {
    const { params } = message;
    const origin = new URL(c.req.url).origin;
    switch (message.method) {
      case "initialize":
        return {
          protocolVersion: era.version,
          capabilities: CAPABILITIES,
          serverInfo: server,
          instructions: INSTRUCTIONS,
        };
      case "server/discover":
        return {
          supportedVersions: SUPPORTED_VERSIONS,
          capabilities: CAPABILITIES,
          instructions: INSTRUCTIONS,
          ...cacheable(DOCS_TTL_MS, "public", era),
        };
      case "ping":
        if (era.modern) break;
        return {};
      case "tools/list": {
        assertFirstPage(params);
        const principal = c.get("principal");
        const tools = toolsOf(version.document(origin))
          .filter((tool) => isVisibleTo(tool, principal))
          .map((tool) => tool.definition);
        // The list depends on the key's scopes: private to it.
        return { tools, ...cacheable(TOOLS_TTL_MS, "private", era) };
      }
      case "tools/call":
        return callNamedTool(c, params, origin);
      case "resources/list":
        assertFirstPage(params);
        return {
          resources: resources.map(({ read: _, ...resource }) => resource),
          ...cacheable(DOCS_TTL_MS, "public", era),
        };
      case "resources/templates/list":
        assertFirstPage(params);
        return { resourceTemplates: [], ...cacheable(DOCS_TTL_MS, "public", era) };
      case "resources/read": {
        const resource = resources.find((candidate) => candidate.uri === params.uri);
        if (!resource) {
          // 2026-07-28 answers an unknown resource with Invalid params; earlier revisions had a code of their own.
          const code = era.modern ? RPC.invalidParams : RPC.resourceNotFound;
          throw new RpcError(code, `Resource not found: ${String(params.uri)}`, 200, { uri: params.uri });
        }
        const contents = [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.read(origin) }];
        return { contents, ...cacheable(DOCS_TTL_MS, "public", era) };
      }
    }
    // 2026-07-28 answers an unknown method 404, so that it is told apart from a server without this endpoint.
    throw new RpcError(RPC.methodNotFound, `Method not found: ${message.method}`, era.modern ? 404 : 200);
  }

  async function callNamedTool(c: McpContext, params: Record<string, unknown>, origin: string) {
    const document = version.document(origin);
    const tool = toolsOf(document).find((candidate) => candidate.definition.name === params.name);
    if (!tool) throw new RpcError(RPC.invalidParams, `Unknown tool: ${String(params.name)}`);
    const args = params.arguments ?? {};
    if (!isPlainObject(args)) throw new RpcError(RPC.invalidParams, "`arguments` must be an object.");
    const { result, headers } = await callTool(tool, args, {
      serverUrl: document.servers?.[0]?.url as string,
      forwarded: c.req.raw.headers,
      requestId: c.get("requestId"),
      dispatch: (request) => dispatch(request, c),
    });
    for (const [name, value] of headers) c.header(name, value);
    return result;
  }

  return mcp;
}

const CAPABILITIES = { tools: {}, resources: {} };

/** This server hands out no cursors: every list is one page. */
function assertFirstPage(params: Record<string, unknown>): void {
  if (params.cursor !== undefined) throw new RpcError(RPC.invalidParams, "Invalid cursor: every list is one page.");
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
  return keyGuard(c as unknown as Context<AppEnv>, next);
});

/** RFC 6750's challenge: `invalid_token` when a token was sent, the bare scheme when none was. */
function challenge(c: McpContext): string {
  if (!bearerToken(c)) return 'Bearer realm="mcp"';
  return 'Bearer realm="mcp", error="invalid_token", error_description="The API key is unknown, revoked or expired."';
}

import type { Context } from "hono";
import type { OpenApiDocument } from "../api-docs/document";
import type { BuiltVersion } from "../api-versions";
import type { AppEnv } from "../env";
import { isPlainObject } from "../platform/json";
import { callTool } from "./call";
import { RPC, RpcError } from "./json-rpc";
import { cacheable, type Era, type ServerInfo, SUPPORTED_VERSIONS } from "./protocol";
import { documentResources } from "./resources";
import { isVisibleTo, toolsOf } from "./tools";

/** The MCP methods this server answers: the lifecycle, tools and resources. */

/** One request, its revision settled and its key admitted (except a tool call's, which its API request admits). */
export interface MethodCall {
  c: Context<AppEnv>;
  params: Record<string, unknown>;
  era: Era;
  server: ServerInfo;
  origin: string;
  document: OpenApiDocument;
}

export interface Method {
  run: (call: MethodCall) => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Gone from 2026-07-28 on, with the handshake. */
  legacyOnly?: boolean;
}

/** Runs a request through the whole API (`app.fetch`), as if it had come from outside. */
export type Dispatch = (request: Request, c: Context<AppEnv>) => Promise<Response>;

const CAPABILITIES = { tools: {}, resources: {} };
/** Tool lists follow the key's scopes, which may change; the documents change with a deploy. */
const TOOLS_TTL_MS = 60_000;
const DOCS_TTL_MS = 3_600_000;

const INSTRUCTIONS =
  "Each tool is one operation of the Proxy Account API, named by its operationId, acting on the account of the " +
  "API key this server was given (its sandbox, with simulated money, for a test_ key). Only the tools the key's " +
  "scopes (and, for a key bound to sub-users, its binding) allow are listed. Writes take `idempotency_key`; each result names the key it used: call again with it " +
  "to retry without acting twice. A refused call returns isError with the API error's code, message, doc_url (its " +
  "cause and fix) and request_id. Lists are cursor-paginated: pass a page's `next_cursor` as `cursor`. Actions " +
  "gated by MFA take `mfa_code`. Resources: the error codes and the OpenAPI document.";

export function mcpMethods(version: BuiltVersion, dispatch: Dispatch): Record<string, Method> {
  const resources = documentResources(version);
  return {
    initialize: {
      legacyOnly: true,
      run: ({ era, server }) => ({
        protocolVersion: era.version,
        capabilities: CAPABILITIES,
        serverInfo: server,
        instructions: INSTRUCTIONS,
      }),
    },
    ping: { legacyOnly: true, run: () => ({}) },
    "server/discover": {
      run: ({ era }) => ({
        supportedVersions: SUPPORTED_VERSIONS,
        capabilities: CAPABILITIES,
        instructions: INSTRUCTIONS,
        ...cacheable(DOCS_TTL_MS, "public", era),
      }),
    },
    "tools/list": {
      run: ({ c, params, era, document }) => {
        assertFirstPage(params);
        const tools = toolsOf(document).filter((tool) => isVisibleTo(tool, c.get("principal")));
        // The list depends on the key's scopes: private to it.
        return { tools: tools.map((tool) => tool.definition), ...cacheable(TOOLS_TTL_MS, "private", era) };
      },
    },
    "tools/call": { run: (call) => callNamedTool(call, dispatch) },
    "resources/list": {
      run: ({ params, era }) => {
        assertFirstPage(params);
        const listed = resources.map(({ read: _, ...resource }) => resource);
        return { resources: listed, ...cacheable(DOCS_TTL_MS, "public", era) };
      },
    },
    "resources/templates/list": {
      run: ({ params, era }) => {
        assertFirstPage(params);
        return { resourceTemplates: [], ...cacheable(DOCS_TTL_MS, "public", era) };
      },
    },
    "resources/read": {
      run: ({ params, era, origin }) => {
        const resource = resources.find((candidate) => candidate.uri === params.uri);
        if (!resource) {
          // 2026-07-28 answers an unknown resource with Invalid params; earlier revisions had a code of their own.
          const code = era.modern ? RPC.invalidParams : RPC.resourceNotFound;
          throw new RpcError(code, `Resource not found: ${String(params.uri)}`, 200, { uri: params.uri });
        }
        const contents = [{ uri: resource.uri, mimeType: resource.mimeType, text: resource.read(origin) }];
        return { contents, ...cacheable(DOCS_TTL_MS, "public", era) };
      },
    },
  };
}

async function callNamedTool({ c, params, document }: MethodCall, dispatch: Dispatch) {
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
  // The key's budget as the API request left it.
  for (const [name, value] of headers) c.header(name, value);
  return result;
}

/** This server hands out no cursors: every list is one page. */
function assertFirstPage(params: Record<string, unknown>): void {
  if (params.cursor !== undefined) throw new RpcError(RPC.invalidParams, "Invalid cursor: every list is one page.");
}

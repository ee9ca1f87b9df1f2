import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { BASE } from "../helpers/http";

export const MCP_URL = `${BASE}/mcp`;

/** Every request a client makes goes to the worker's own fetch handler, inside workerd. */
export const workerFetch = (input: string | URL | Request, init?: RequestInit) =>
  exports.default.fetch(new Request(input, init));

/** The official SDK client, connected (initialize, then initialized) to the worker's `/mcp` with an API key. */
export async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "mcp-tests", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    fetch: workerFetch,
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** A tool result as the tests read it. */
export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text: string }>;
  structuredContent?: Record<string, any>;
  _meta?: Record<string, any>;
}

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args })) as ToolResult;
}

/** One raw JSON-RPC message POSTed to `/mcp`, for what the SDK client does not show (headers, statuses). */
export function post(token: string | null, message: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return workerFetch(MCP_URL, {
    method: "POST",
    headers: {
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof message === "string" ? message : JSON.stringify(message),
  });
}

export const MODERN = "2026-07-28";

/** A request as a 2026-07-28 client sends it: its version and capabilities in `_meta`, mirrored in headers. */
export function modernRequest(token: string, method: string, params: Record<string, unknown> = {}, id = 1) {
  const name = (params.name ?? params.uri) as string | undefined;
  const meta = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": { name: "mcp-tests", version: "1.0.0" },
  };
  return post(
    token,
    { jsonrpc: "2.0", id, method, params: { ...params, _meta: meta } },
    { "MCP-Protocol-Version": MODERN, "Mcp-Method": method, ...(name ? { "Mcp-Name": name } : {}) },
  );
}

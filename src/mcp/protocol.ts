import { isPlainObject } from "../platform/json";
import { type JsonRpcMessage, RPC, RpcError } from "./json-rpc";

/**
 * The protocol revisions this server speaks. Since 2026-07-28 ("modern") MCP is stateless: every request carries
 * its version and the client's capabilities in `_meta`, mirrored in headers. Up to 2025-11-25 ("legacy") a client
 * opens with `initialize`; with no session to keep (this server mints none) every later request stands alone too,
 * so both are served side by side on one endpoint.
 */
export const MODERN_VERSIONS = ["2026-07-28"] as const;
export const LEGACY_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"] as const;
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS];
/** A legacy request without `MCP-Protocol-Version` is read as 2025-03-26, which had no such header. */
const HEADERLESS_VERSION = "2025-03-26";

const META = {
  protocolVersion: "io.modelcontextprotocol/protocolVersion",
  clientCapabilities: "io.modelcontextprotocol/clientCapabilities",
  serverInfo: "io.modelcontextprotocol/serverInfo",
} as const;

/** The revision one request is served under. */
export interface Era {
  version: string;
  modern: boolean;
}

/** Methods whose `Mcp-Name` header mirrors a parameter (2026-07-28). */
const NAMED_METHODS: Record<string, string> = { "tools/call": "name", "resources/read": "uri", "prompts/get": "name" };

/**
 * The revision a request is served under, after the checks its revision requires of the HTTP request: a modern
 * request's headers must mirror its body (`HeaderMismatch`), its `_meta` must name a version this server speaks
 * (`UnsupportedProtocolVersion`, listing them) and the client's capabilities (`Invalid params`); all HTTP 400.
 */
export function eraOf(message: JsonRpcMessage, headers: Headers): Era {
  const header = headers.get("MCP-Protocol-Version");
  if (message.method === "initialize") return { version: negotiatedLegacyVersion(message.params), modern: false };
  const meta = isPlainObject(message.params._meta) ? message.params._meta : {};
  const declared = meta[META.protocolVersion];
  if (declared === undefined && !(MODERN_VERSIONS as readonly string[]).includes(header ?? "")) {
    const version = header ?? HEADERLESS_VERSION;
    if (!(LEGACY_VERSIONS as readonly string[]).includes(version)) throw unsupportedVersion(version);
    return { version, modern: false };
  }
  if (typeof declared !== "string") {
    throw new RpcError(RPC.invalidParams, `_meta["${META.protocolVersion}"] is required on every request.`, 400);
  }
  if (header !== declared) {
    throw headerMismatch(`MCP-Protocol-Version (${header ?? "missing"}) must equal the request's _meta version.`);
  }
  if (!(MODERN_VERSIONS as readonly string[]).includes(declared)) throw unsupportedVersion(declared);
  if (!isPlainObject(meta[META.clientCapabilities])) {
    throw new RpcError(RPC.invalidParams, `_meta["${META.clientCapabilities}"] is required on every request.`, 400);
  }
  assertMirrored(headers, "Mcp-Method", message.method);
  const named = Object.hasOwn(NAMED_METHODS, message.method) ? NAMED_METHODS[message.method] : undefined;
  if (named) assertMirrored(headers, "Mcp-Name", String(message.params[named] ?? ""));
  return { version: declared, modern: true };
}

/** `initialize` (legacy): the client's version when this server speaks it, else the latest legacy one. */
function negotiatedLegacyVersion(params: Record<string, unknown>): string {
  const requested = params.protocolVersion;
  return typeof requested === "string" && (LEGACY_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LEGACY_VERSIONS[0];
}

function assertMirrored(headers: Headers, name: string, expected: string): void {
  const value = headers.get(name);
  if (value === null) throw headerMismatch(`The ${name} header is required.`);
  if (decodedHeader(value) !== expected) throw headerMismatch(`The ${name} header does not match the request body.`);
}

/** A header value as sent, or decoded from the `=?base64?…?=` form clients use for values that are not plain ASCII. */
function decodedHeader(value: string): string | null {
  const encoded = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (!encoded) return value;
  try {
    const bytes = Uint8Array.from(atob(encoded[1] as string), (char) => char.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

function headerMismatch(message: string): RpcError {
  return new RpcError(RPC.headerMismatch, `Header mismatch: ${message}`, 400);
}

function unsupportedVersion(requested: string): RpcError {
  return new RpcError(RPC.unsupportedProtocolVersion, "Unsupported protocol version", 400, {
    supported: SUPPORTED_VERSIONS,
    requested,
  });
}

/** What a result carries under its revision: since 2026-07-28 its `resultType` and the server's identity. */
export function finished(result: Record<string, unknown>, era: Era, server: ServerInfo): Record<string, unknown> {
  if (!era.modern) return result;
  const meta = isPlainObject(result._meta) ? result._meta : {};
  return { resultType: "complete", ...result, _meta: { ...meta, [META.serverInfo]: server } };
}

export interface ServerInfo {
  name: string;
  title: string;
  version: string;
}

/** How long a list or a document may be reused (2026-07-28's cacheable results); private when it depends on the key. */
export function cacheable(ttlMs: number, scope: "public" | "private", era: Era): Record<string, unknown> {
  return era.modern ? { ttlMs, cacheScope: scope } : {};
}

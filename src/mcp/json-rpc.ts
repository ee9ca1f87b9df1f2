import { isPlainObject } from "../platform/json";

/**
 * JSON-RPC 2.0 as MCP uses it over Streamable HTTP: one message per POST, a request (with an id) or a
 * notification; an error answers with its code, message and the HTTP status the transport gives it.
 */

export type RequestId = string | number;

export interface JsonRpcMessage {
  /** Absent on a notification. */
  id?: RequestId;
  method: string;
  params: Record<string, unknown>;
}

/** JSON-RPC's own codes and those MCP defines (its `-32020`…`-32099` range). */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** Protocol revisions up to 2025-11-25: a resource that does not exist (since 2026-07-28: `invalidParams`). */
  resourceNotFound: -32002,
  headerMismatch: -32020,
  unsupportedProtocolVersion: -32022,
} as const;

/** A protocol error: answered as a JSON-RPC error response, with `status` as the HTTP status. */
export class RpcError extends Error {
  readonly code: number;
  readonly status: number;
  readonly data?: unknown;

  constructor(code: number, message: string, status = 200, data?: unknown) {
    super(message);
    this.code = code;
    this.status = status;
    this.data = data;
    this.name = "RpcError";
  }
}

export function errorResponse(id: RequestId | null, error: RpcError) {
  const body = { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) };
  return { jsonrpc: "2.0" as const, ...(id === null ? {} : { id }), error: body };
}

export function resultResponse(id: RequestId, result: Record<string, unknown>) {
  return { jsonrpc: "2.0" as const, id, result };
}

/** The one message of a POST body, or a `parseError`/`invalidRequest` (HTTP 400). */
export function parseMessage(text: string): JsonRpcMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RpcError(RPC.parseError, "The body is not valid JSON.", 400);
  }
  if (Array.isArray(value)) {
    throw new RpcError(RPC.invalidRequest, "Send one JSON-RPC message per request: batches are not supported.", 400);
  }
  if (!isPlainObject(value) || value.jsonrpc !== "2.0") {
    throw new RpcError(RPC.invalidRequest, 'The body must be a JSON-RPC 2.0 message ("jsonrpc": "2.0").', 400);
  }
  if (typeof value.method !== "string") {
    throw new RpcError(RPC.invalidRequest, "Only requests and notifications are accepted: `method` is missing.", 400);
  }
  const { id } = value;
  if ("id" in value && typeof id !== "string" && !(typeof id === "number" && Number.isInteger(id))) {
    throw new RpcError(RPC.invalidRequest, "A request's `id` must be a string or an integer.", 400);
  }
  if (value.params !== undefined && !isPlainObject(value.params)) {
    throw new RpcError(RPC.invalidRequest, "`params` must be an object.", 400);
  }
  return {
    id: id as RequestId | undefined,
    method: value.method,
    params: (value.params ?? {}) as Record<string, unknown>,
  };
}

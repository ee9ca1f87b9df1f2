import { ApiError, type ErrorBody, errorBody } from "../platform/errors";
import { isPlainObject } from "../platform/json";
import { BODY_ARGUMENT, type OperationBinding, type Tool } from "./tools";

/**
 * A tool call is the operation's HTTP request, dispatched through the API itself with the caller's own
 * `Authorization`: authentication, scopes, MFA, plan gates, rate limits, idempotency and the sandbox apply exactly
 * as they do to any request. The answer becomes the tool's result; an API error, a result with `isError`.
 */

export interface CallContext {
  /** The version's server URL, e.g. `https://api.example.com/v1`. */
  serverUrl: string;
  /** The MCP request's headers passed on: `Authorization`, and the client address the edge saw. */
  forwarded: Headers;
  requestId: string;
  dispatch: (request: Request) => Promise<Response>;
}

export interface CallResult {
  result: Record<string, unknown>;
  /** The API's response headers worth passing on (the key's rate-limit budget). */
  headers: Headers;
}

const FORWARDED_HEADERS = ["Authorization", "CF-Connecting-IP"];
const PASSED_ON_HEADERS = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"];

export async function callTool(tool: Tool, args: Record<string, unknown>, context: CallContext): Promise<CallResult> {
  const { binding } = tool;
  const idempotencyKey = binding.idempotencyArgument
    ? (args[binding.idempotencyArgument] ?? crypto.randomUUID())
    : undefined;
  const withKey = binding.idempotencyArgument ? { ...args, [binding.idempotencyArgument]: idempotencyKey } : args;
  let request: Request;
  try {
    request = requestFor(tool, withKey, context);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const body = errorBody(error, context.requestId, new URL(context.serverUrl).origin);
    return { result: errorResult(body, {}), headers: new Headers() };
  }
  const response = await context.dispatch(request);
  // An unknown, revoked or expired key is the connection's problem, not the tool's: the transport answers 401.
  if (response.status === 401) throw new ApiError("unauthorized", ((await response.json()) as ErrorBody).message);
  const meta = {
    request_id: response.headers.get("X-Request-Id"),
    ...(idempotencyKey === undefined
      ? {}
      : { idempotency_key: idempotencyKey, idempotent_replayed: response.headers.has("Idempotent-Replayed") }),
  };
  const headers = new Headers();
  for (const name of PASSED_ON_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  return { result: await resultOf(response, meta), headers };
}

/** The HTTP request for a call; an argument the request cannot carry is refused as the API would (422). */
function requestFor(tool: Tool, args: Record<string, unknown>, context: CallContext): Request {
  const { binding } = tool;
  const known = new Set(Object.keys(tool.definition.inputSchema.properties as object));
  const unknown = Object.keys(args).filter((name) => !known.has(name));
  if (unknown.length > 0) throw invalidArguments(unknown.map((name) => [name, "is not an argument of this tool."]));

  const path = binding.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = args[name];
    if (typeof value !== "string" && typeof value !== "number") throw invalidArguments([[name, "is required."]]);
    // A dot segment would be resolved away by the URL and address another operation.
    if (value === "" || value === "." || value === "..") throw invalidArguments([[name, "is not an id."]]);
    return encodeURIComponent(String(value));
  });
  const url = new URL(`${context.serverUrl}${path}`);
  for (const name of binding.queryArguments) {
    const value = args[name];
    if (value !== undefined && value !== null) url.searchParams.set(name, scalar(value));
  }

  const headers = new Headers({ Accept: "application/json" });
  for (const name of FORWARDED_HEADERS) {
    const value = context.forwarded.get(name);
    if (value !== null) headers.set(name, value);
  }
  for (const [argument, header] of Object.entries(binding.headerArguments)) {
    const value = args[argument];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" || !/^[\x20-\x7E]*$/.test(value)) {
      throw invalidArguments([[argument, "must be a string of printable ASCII characters."]]);
    }
    headers.set(header, value);
  }

  const body = bodyOf(binding, args);
  if (body !== undefined) headers.set("Content-Type", "application/json");
  return new Request(url, { method: binding.method, headers, body: body === undefined ? null : JSON.stringify(body) });
}

function bodyOf(binding: OperationBinding, args: Record<string, unknown>): unknown {
  if (binding.body === "nested") return args[BODY_ARGUMENT];
  if (binding.body === "none") return undefined;
  const elsewhere = new Set([
    ...binding.pathArguments,
    ...binding.queryArguments,
    ...Object.keys(binding.headerArguments),
  ]);
  return Object.fromEntries(Object.entries(args).filter(([name]) => !elsewhere.has(name)));
}

/** A query value as the API reads it: strings as they are, numbers and booleans written out, anything else as JSON. */
function scalar(value: unknown): string {
  return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
}

function invalidArguments(problems: Array<[string, string]>): ApiError {
  const details = problems.map(([field, message]) => ({ field, message: `${field}: ${message}` }));
  return new ApiError("invalid_request", details.map((detail) => detail.message).join(" "), { details });
}

async function resultOf(response: Response, meta: Record<string, unknown>): Promise<Record<string, unknown>> {
  const isJson = /^application\/([\w.-]+\+)?json\b/i.test(response.headers.get("Content-Type") ?? "");
  if (!isJson) {
    // A CSV or plain-text answer (a batch's IP list) is text content.
    const content = [{ type: "text", text: await response.text() }];
    return { content, ...(response.ok ? {} : { isError: true }), _meta: meta };
  }
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok) return errorResult(body as unknown as ErrorBody, meta);
  return {
    content: [{ type: "text", text: JSON.stringify(body) }, ...idempotencyNote(meta)],
    ...(isPlainObject(body) ? { structuredContent: body } : {}),
    _meta: meta,
  };
}

/** The API's error as a tool error the model can act on: its code, message and `doc_url` (and the request id). */
function errorResult(body: ErrorBody, meta: Record<string, unknown>): Record<string, unknown> {
  const details = (body.details ?? []).map((detail) => `\n- ${detail.message}`).join("");
  const text = `${body.code}: ${body.message}${details}\nHow to fix it: ${body.doc_url} (request ${body.request_id})`;
  return {
    content: [{ type: "text", text }, ...idempotencyNote(meta)],
    structuredContent: body,
    isError: true,
    _meta: { ...meta, request_id: body.request_id },
  };
}

/** Writes say which Idempotency-Key they carried: the model retries with it to act once at most. */
function idempotencyNote(meta: Record<string, unknown>) {
  if (meta.idempotency_key === undefined) return [];
  const replayed = meta.idempotent_replayed ? " This result is the replay of the first call with this key." : "";
  const text =
    `Idempotency-Key: ${meta.idempotency_key}. To retry this call without acting twice, call again with ` +
    `idempotency_key "${meta.idempotency_key}".${replayed}`;
  return [{ type: "text", text }];
}

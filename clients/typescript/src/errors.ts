import type { components } from "./schema.js";

/** Every code the API's error catalogue holds, as generated from the OpenAPI document. */
export type ErrorCode = components["schemas"]["Error"]["code"];

export interface FieldProblem {
  field: string;
  message: string;
}

/**
 * An answer of the API that is not a success, with the API's error body: `{code, message, request_id}` (and the
 * field problems of `invalid_request`). `code` is one of `ErrorCode`, or a code newer than this client; an answer
 * that is not the API's JSON (a proxy's 502 page, say) gets `unexpected_response`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | "unexpected_response" | (string & {});
  readonly request_id: string | null;
  readonly details: FieldProblem[] | undefined;
  /** The code's entry on the API's page of error codes: its cause and how to fix it. */
  readonly doc_url: string | null;
  /** The answer itself, for its headers (`Retry-After`, `X-RateLimit-*`). Its body has been read. */
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const error = isErrorBody(body) ? body : null;
    super(error?.message ?? `Unexpected response: HTTP ${response.status}.`);
    this.name = "ApiError";
    this.status = response.status;
    this.code = error?.code ?? "unexpected_response";
    this.request_id = error?.request_id ?? response.headers.get("X-Request-Id");
    this.details = error?.details;
    this.doc_url = error?.doc_url ?? null;
    this.response = response;
  }
}

interface ErrorBody {
  code: string;
  message: string;
  request_id?: string;
  doc_url?: string;
  details?: FieldProblem[];
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== "object" || body === null) return false;
  const { code, message } = body as Record<string, unknown>;
  return typeof code === "string" && typeof message === "string";
}

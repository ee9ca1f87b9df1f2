import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppEnv } from "../env";
import { ApiError, type ErrorCode, errorBody } from "./errors";
import { logError } from "./logger";

function render(c: Context<AppEnv>, error: ApiError): Response {
  for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
  return c.json(errorBody(error, c.get("requestId"), new URL(c.req.url).origin), error.status);
}

/**
 * What Hono's own HTTP exceptions mean in the catalogue: its validators throw 400 for a body that is not JSON
 * and 415 for a body of another media type (both the API's `invalid_json` rule), body limits 413.
 */
const httpExceptionCodes: Partial<Record<number, ErrorCode>> = {
  400: "invalid_json",
  401: "unauthorized",
  404: "not_found",
  405: "method_not_allowed",
  413: "payload_too_large",
  415: "invalid_json",
};

/** The one place where anything thrown becomes `{code, message, request_id}`. */
export const handleError: ErrorHandler<AppEnv> = (error, c) => {
  if (error instanceof ApiError) return render(c, error);
  const code = error instanceof HTTPException ? httpExceptionCodes[error.status] : undefined;
  if (code) return render(c, new ApiError(code));
  logError("unhandled_error", { request_id: c.get("requestId"), method: c.req.method, route: c.req.routePath }, error);
  return render(c, new ApiError("internal_error"));
};

/**
 * Unknown paths are 404 `not_found`; a known path with another method is 405 `method_not_allowed`
 * with an `Allow` header.
 */
export function notFoundHandler(
  routes: () => ReadonlyArray<{ method: string; path: string }>,
): NotFoundHandler<AppEnv> {
  let patterns: Array<{ method: string; regex: RegExp }> | null = null;
  return (c) => {
    patterns ??= routes()
      .filter((route) => route.method !== "ALL")
      .map((route) => ({
        method: route.method,
        regex: new RegExp(`^${route.path.replace(/:[^/]+/g, "[^/]+").replace(/\*/g, ".*")}/?$`),
      }));
    const allowed = [...new Set(patterns.filter((p) => p.regex.test(c.req.path)).map((p) => p.method))];
    if (allowed.length > 0) {
      c.header("Allow", allowed.join(", "));
      return render(
        c,
        new ApiError("method_not_allowed", `${c.req.method} is not allowed here; use ${allowed.join(", ")}.`),
      );
    }
    return render(c, new ApiError("not_found", `No route matches ${c.req.method} ${c.req.path}.`));
  };
}

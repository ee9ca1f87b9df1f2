import type { Context } from "hono";
import type { WindowVerdict } from "../durable-objects/api-key-guard/contract";
import { ApiError } from "../platform/errors";

export function setRateLimitHeaders(c: Context, rate: WindowVerdict): void {
  c.header("X-RateLimit-Limit", String(rate.limit));
  c.header("X-RateLimit-Remaining", String(rate.remaining));
  c.header("X-RateLimit-Reset", String(rate.reset));
}

/** A refusal by the rolling window that ran out: its figures in the body, the wait in `Retry-After`. */
export function rateLimited(rate: WindowVerdict): ApiError {
  return new ApiError("rate_limited", undefined, {
    headers: { "Retry-After": String(rate.retryAfter ?? 1) },
    limit: {
      limit: rate.limit,
      current: rate.limit - rate.remaining,
      raisedBy: "a higher plan, or a custom limit set by support",
    },
  });
}

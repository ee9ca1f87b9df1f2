/** When and how long to wait before trying a request again: pure functions, no I/O. */

export interface RetryPolicy {
  /** Attempts in all, the first included (1 turns retries off). */
  maxAttempts: number;
  /** The backoff ceiling before the first retry; it doubles before each further retry. */
  baseDelayMs: number;
  /** No wait is longer (spec §8.3: 30 s). A Retry-After beyond it ends the retries at once. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

/** A `Retry-After` value (delay in seconds, or an HTTP date) as milliseconds from `now`; null if absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date starts with the day's name ("Sun, 06 Nov 1994 08:49:37 GMT"); anything else is unreadable.
  const date = /^[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now);
}

/** Exponential backoff with full jitter: uniform in [0, min(max, base · 2^(retry − 1))). `retry` counts from 1. */
export function backoffDelayMs(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/**
 * The wait before retry number `retry` (from 1), or null when no retry is left or the server asks for a wait
 * longer than the policy allows (retrying sooner would only be refused again). The server's `Retry-After`, when
 * given, is the wait: it says when the rate-limit window frees.
 */
export function delayBeforeRetry(
  retry: number,
  retryAfterMs: number | null,
  policy: RetryPolicy,
  random: () => number,
): number | null {
  if (retry >= policy.maxAttempts) return null;
  if (retryAfterMs !== null) return retryAfterMs <= policy.maxDelayMs ? retryAfterMs : null;
  return backoffDelayMs(retry, policy, random);
}

/**
 * Answers worth another attempt: 429, every 5xx, and 409 `idempotency_key_in_use` (the first attempt of this very
 * request is still running on the server; the retry then gets its stored response).
 */
export function isRetryableStatus(status: number, errorCode: string | null): boolean {
  return status === 429 || status >= 500 || (status === 409 && errorCode === "idempotency_key_in_use");
}

import { DAY, HOUR, MINUTE, SECOND } from "../../platform/clock";

/**
 * The retry schedule (reference facts: a failing delivery is retried 3 times over 24 hours): the first attempt at
 * once, then retries 5 minutes, 2 hours and 24 hours after the first attempt. After the last one fails the delivery
 * is `failed` and the endpoint is disabled.
 */
export const RETRY_OFFSETS_MS = [5 * MINUTE, 2 * HOUR, 24 * HOUR] as const;

/** A receiver's `Retry-After` may push a retry later, but never more than this past the attempt. */
export const MAX_RETRY_AFTER_MS = DAY;

/** When the next automatic attempt is due after `automaticAttempts` failed ones; null when none is left. */
export function nextAttemptAt(
  firstAttemptAt: number,
  automaticAttempts: number,
  attemptedAt: number,
  retryAfterMs: number | null,
): number | null {
  const offset = RETRY_OFFSETS_MS[automaticAttempts - 1];
  if (offset === undefined) return null;
  const scheduled = firstAttemptAt + offset;
  if (retryAfterMs === null) return scheduled;
  return Math.max(scheduled, attemptedAt + Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** `Retry-After` as milliseconds from `at`: delay-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, at: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d{1,10}$/.test(trimmed)) return Number(trimmed) * SECOND;
  const date = Date.parse(trimmed);
  return Number.isFinite(date) ? Math.max(0, date - at) : null;
}

import { describe, expect, it } from "vitest";
import {
  backoffDelayMs,
  DEFAULT_RETRY_POLICY,
  delayBeforeRetry,
  isRetryableStatus,
  parseRetryAfter,
} from "../../clients/typescript/src/retry";

const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);
const policy = DEFAULT_RETRY_POLICY;

describe("client retry policy (pure)", () => {
  it("reads Retry-After as delay seconds", () => {
    expect(parseRetryAfter("20", NOW)).toBe(20_000);
    expect(parseRetryAfter(" 0 ", NOW)).toBe(0);
  });

  it("reads Retry-After as an HTTP date, relative to now, never negative", () => {
    expect(parseRetryAfter(new Date(NOW + 7_000).toUTCString(), NOW)).toBe(7_000);
    expect(parseRetryAfter(new Date(NOW - 7_000).toUTCString(), NOW)).toBe(0);
  });

  it("ignores an absent or unreadable Retry-After", () => {
    expect(parseRetryAfter(null, NOW)).toBeNull();
    expect(parseRetryAfter("soon", NOW)).toBeNull();
    expect(parseRetryAfter("-5", NOW)).toBeNull();
  });

  it("full jitter: the wait is uniform below a ceiling that doubles per retry from the base", () => {
    expect(backoffDelayMs(1, policy, () => 0)).toBe(0);
    expect(backoffDelayMs(1, policy, () => 0.999_999)).toBe(499);
    expect(backoffDelayMs(2, policy, () => 0.5)).toBe(500);
    expect(backoffDelayMs(3, policy, () => 0.5)).toBe(1_000);
  });

  it("the backoff ceiling never exceeds 30 s", () => {
    expect(backoffDelayMs(20, policy, () => 0.999_999)).toBe(29_999);
  });

  it("honours Retry-After exactly when it is within 30 s, and gives up when it is longer", () => {
    expect(delayBeforeRetry(1, 20_000, policy, () => 0)).toBe(20_000);
    expect(delayBeforeRetry(1, 30_000, policy, () => 0)).toBe(30_000);
    expect(delayBeforeRetry(1, 86_400_000, policy, () => 0)).toBeNull();
  });

  it("stops after maxAttempts attempts in all", () => {
    expect(delayBeforeRetry(3, null, policy, () => 0.5)).not.toBeNull();
    expect(delayBeforeRetry(4, null, policy, () => 0.5)).toBeNull();
    expect(delayBeforeRetry(1, null, { ...policy, maxAttempts: 1 }, () => 0.5)).toBeNull();
  });

  it("retries 429, every 5xx and 409 idempotency_key_in_use; nothing else", () => {
    for (const status of [429, 500, 502, 503, 504]) expect(isRetryableStatus(status, null)).toBe(true);
    expect(isRetryableStatus(409, "idempotency_key_in_use")).toBe(true);
    expect(isRetryableStatus(409, "label_taken")).toBe(false);
    for (const status of [200, 400, 401, 403, 404, 422]) expect(isRetryableStatus(status, null)).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { RollingWindows } from "../../src/durable-objects/api-key-guard/rolling-window";

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

describe("RollingWindows (pure logic)", () => {
  it("admits exactly perMinute requests in any rolling 60 s, then frees a slot when the oldest leaves", () => {
    const windows = new RollingWindows();
    const limits = { perMinute: 3, perDay: null };
    expect(windows.admit(T0, limits).allowed).toBe(true);
    expect(windows.admit(T0 + 10_000, limits).allowed).toBe(true);
    expect(windows.admit(T0 + 20_000, limits).allowed).toBe(true);
    const refused = windows.admit(T0 + 30_000, limits);
    expect(refused.allowed).toBe(false);
    expect(refused.remaining).toBe(0);
    // The oldest (T0) leaves at T0 + 60 s exactly.
    expect(refused.reset).toBe((T0 + 60_000) / 1000);
    expect(refused.retryAfter).toBe(30);
    expect(windows.admit(T0 + 59_999, limits).allowed).toBe(false);
    expect(windows.admit(T0 + 60_000, limits).allowed).toBe(true);
  });

  it("reports the window with the lower remaining", () => {
    const windows = new RollingWindows();
    const first = windows.admit(T0, { perMinute: 10, perDay: 3 });
    expect(first).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    const second = new RollingWindows().admit(T0, { perMinute: 2, perDay: 100 });
    expect(second).toMatchObject({ allowed: true, limit: 2, remaining: 1, reset: (T0 + 60_000) / 1000 });
  });

  it("enforces the 24-hour window and releases a bucket once its latest request has left", () => {
    const windows = new RollingWindows();
    const limits = { perMinute: 100, perDay: 3 };
    expect(windows.admit(T0 + 200, limits).allowed).toBe(true);
    expect(windows.admit(T0 + 500, limits).allowed).toBe(true);
    expect(windows.admit(T0 + 3_600_000, limits).allowed).toBe(true);
    const refused = windows.admit(T0 + 7_200_000, limits);
    expect(refused).toMatchObject({ allowed: false, limit: 3 });
    // The bucket of second T0 holds requests at +200 and +500 ms: it leaves when the later one does.
    expect(windows.admit(T0 + 86_400_000 + 499, limits).allowed).toBe(false);
    expect(windows.admit(T0 + 86_400_000 + 500, limits).allowed).toBe(true);
    expect(refused.reset).toBe(T0 / 1000 + 86_400 + 1);
    expect(refused.retryAfter).toBe(86_400 - 7_200 + 1);
  });

  it("Retry-After is the whole seconds until the oldest request leaves: never above 60 (or 86,400)", () => {
    const windows = new RollingWindows();
    const burst = { perMinute: 2, perDay: null };
    windows.admit(T0 + 900, burst);
    windows.admit(T0 + 901, burst);
    const refused = windows.admit(T0 + 950, burst);
    // The oldest leaves at T0 + 60.9 s: 59.95 s from now → 60, and the reset second agrees (T0 + 61).
    expect(refused.retryAfter).toBe(60);
    expect(refused.reset).toBe(T0 / 1000 + 61);
    expect(refused.reset - (T0 + 950) / 1000).toBeLessThanOrEqual((refused.retryAfter as number) + 1);

    const daily = new RollingWindows();
    const day = { perMinute: 100, perDay: 1 };
    daily.admit(T0 + 999, day);
    expect(daily.admit(T0 + 999, day).retryAfter).toBe(86_400);
  });

  it("never counts refused requests", () => {
    const windows = new RollingWindows();
    const limits = { perMinute: 1, perDay: null };
    windows.admit(T0, limits);
    for (let i = 1; i < 50; i++) windows.admit(T0 + i * 1000, limits);
    expect(windows.admit(T0 + 60_000, limits).allowed).toBe(true);
  });

  it("restores from persisted buckets conservatively (latest millisecond of each second)", () => {
    const restored = RollingWindows.fromBuckets([{ second: T0 / 1000, count: 2, lastMs: T0 + 999 }], T0 + 1_000);
    const limits = { perMinute: 2, perDay: null };
    expect(restored.admit(T0 + 59_999, limits).allowed).toBe(false);
    expect(restored.admit(T0 + 60_999, limits).allowed).toBe(true);
  });
});

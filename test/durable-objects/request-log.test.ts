import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FULL_LOG_RATE, keepsSample, samplingRate } from "../../durable-objects/request-log";

const MINUTE = 60_000;

describe("request-log sampling (pure rules)", () => {
  it("keeps every candidate of an account under 100 requests a minute", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 0, max: FULL_LOG_RATE }), (requestId, rate) => {
        expect(keepsSample({ requestId, weight: 1 }, rate)).toBe(true);
      }),
    );
  });

  it("keeps at a lower rate every candidate it keeps at a higher one (so the route may sample by a lower figure)", () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.double({ min: 1, max: 50, noNaN: true }),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (requestId, weight, a, b) => {
          const [lower, higher] = a <= b ? [a, b] : [b, a];
          if (keepsSample({ requestId, weight }, higher)) expect(keepsSample({ requestId, weight }, lower)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("keeps about 100 × weight / rate of the candidates", () => {
    const kept = Array.from({ length: 10_000 }, (_, i) => `req_${i}`).filter((requestId) =>
      keepsSample({ requestId, weight: 2 }, 1000),
    ).length;
    expect(kept).toBeGreaterThan(1800);
    expect(kept).toBeLessThan(2200);
  });

  it("samples at the busier of a request's minute and the minute before", () => {
    const counts = new Map([
      [10 * MINUTE, 300],
      [11 * MINUTE, 120],
    ]);
    const countOf = (minute: number) => counts.get(minute) ?? 0;
    expect(samplingRate(11 * MINUTE + 5_000, countOf)).toBe(300);
    expect(samplingRate(10 * MINUTE + 59_999, countOf)).toBe(300);
    expect(samplingRate(12 * MINUTE, countOf)).toBe(120);
  });
});

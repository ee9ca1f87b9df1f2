import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { averagePerDay, FORECAST_HORIZON_DAYS, projectedExhaustion } from "../../src/domain/billing/forecast";
import { cycleMonths } from "../../src/domain/billing/prices";
import { FREE_REPLACEMENT_WINDOW_MS, GRACE_PERIOD_MS } from "../../src/domain/isp/batches";
import { ispTotal } from "../../src/domain/orders/orders";
import { PASSWORD_OVERLAP_MS } from "../../src/domain/subusers/subusers";
import { PROXY_TEST_KEPT_MS } from "../../src/domain/tools/proxy-tests";
import { countedAt, USAGE_KEPT_BACK_MS } from "../../src/domain/traffic/ingest";
import { USAGE_CLOCK_SKEW_MS } from "../../src/durable-objects/traffic-store/contract";
import { MAX_ADMIN_USD } from "../../src/internal/admin/shared";
import {
  addMonths,
  DAY,
  EARLIEST_INSTANT,
  isWithinInstants,
  LATEST_INSTANT,
  MINUTE,
  toIso,
} from "../../src/platform/clock";
import { BYTES_PER_GB, bytesToGb, fractionOf, reachesPercent } from "../../src/platform/units";

/**
 * Every computed number that reaches the wire as a date or a figure, over its extremes: byte counts from 0 and
 * 1 byte to 1 PB, and times from the earliest to the latest instant the API takes (years 0000 to 9999).
 */
const PB = 1_000_000_000_000_000;
const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const bytes = fc.oneof(fc.constantFrom(0, 1, PB - 1, PB), fc.integer({ min: 0, max: PB }));
const instant = fc.oneof(
  fc.constantFrom(EARLIEST_INSTANT, 0, LATEST_INSTANT),
  fc.integer({ min: EARLIEST_INSTANT, max: LATEST_INSTANT }),
);
/** The longest span the API adds to the clock: an ISP order of 36 months, then its grace period. */
const LONGEST_SPAN = 36 * 31 * DAY + GRACE_PERIOD_MS;
/** The clock: any instant that leaves room for the longest span after it. */
const clock = fc.oneof(
  fc.constantFrom(EARLIEST_INSTANT, LATEST_INSTANT - LONGEST_SPAN),
  fc.integer({ min: EARLIEST_INSTANT, max: LATEST_INSTANT - LONGEST_SPAN }),
);

function expectWireTime(ms: number) {
  expect(Number.isSafeInteger(ms)).toBe(true);
  expect(isWithinInstants(ms)).toBe(true);
  expect(toIso(ms)).toMatch(RFC3339_UTC);
  expect(Date.parse(toIso(ms))).toBe(ms);
}

describe("times on the wire", () => {
  it("every instant from 0000-01-01 to 9999-12-31T23:59:59.999Z prints as RFC 3339 and parses back", () => {
    fc.assert(fc.property(instant, (ms) => expectWireTime(ms)));
    expect(toIso(EARLIEST_INSTANT)).toBe("0000-01-01T00:00:00.000Z");
    expect(toIso(LATEST_INSTANT)).toBe("9999-12-31T23:59:59.999Z");
    expect(isWithinInstants(EARLIEST_INSTANT - 1)).toBe(false);
    expect(isWithinInstants(LATEST_INSTANT + 1)).toBe(false);
    expect(isWithinInstants(Number.NaN)).toBe(false);
  });

  it("the forecast's run-out is an instant within the horizon, or null (no run-out in sight)", () => {
    const average = fc.oneof(fc.constantFrom(0, 1 / 7, 1, PB), fc.double({ min: 0, max: PB, noNaN: true }));
    fc.assert(
      fc.property(clock, bytes, average, (at, remaining, avgDaily) => {
        const exhaustsAt = projectedExhaustion(at, remaining, avgDaily);
        if (avgDaily === 0 || remaining === 0 || remaining / avgDaily > FORECAST_HORIZON_DAYS) {
          expect(exhaustsAt).toBeNull();
          return;
        }
        expect(exhaustsAt).not.toBeNull();
        expectWireTime(exhaustsAt as number);
        expect(exhaustsAt).toBeGreaterThanOrEqual(at);
        expect(exhaustsAt).toBeLessThanOrEqual(at + FORECAST_HORIZON_DAYS * DAY);
      }),
    );
    // The customer's first small request: 100 bytes in 7 days of a 10 GB pool.
    expect(projectedExhaustion(Date.now(), 10 * BYTES_PER_GB, averagePerDay(100, 7 * DAY))).toBeNull();
    expect(projectedExhaustion(Date.now(), -1, 1)).toBeNull();
  });

  it("the forecast's daily average is finite and never negative, over any window (an empty one averages 0)", () => {
    fc.assert(
      fc.property(bytes, fc.integer({ min: 0, max: 8 * DAY }), (sum, span) => {
        const average = averagePerDay(sum, span);
        expect(Number.isFinite(average)).toBe(true);
        expect(average).toBeGreaterThanOrEqual(0);
      }),
    );
    expect(averagePerDay(PB, 0)).toBe(0);
  });

  it("renewals and expiries (1 to 36 months on) land on a later instant, the day clamped to the month", () => {
    fc.assert(
      fc.property(clock, fc.integer({ min: 1, max: 36 }), (at, months) => {
        const until = addMonths(at, months);
        expectWireTime(until);
        expect(until - at).toBeGreaterThanOrEqual(months * 28 * DAY - DAY);
        expect(until - at).toBeLessThanOrEqual(months * 31 * DAY);
        expect(new Date(until).getUTCDate()).toBeLessThanOrEqual(new Date(at).getUTCDate());
        expectWireTime(until + GRACE_PERIOD_MS);
      }),
    );
    expect(cycleMonths("annual")).toBe(12);
  });

  it("the fixed spans the API adds (free replacements, proxy tests kept, password overlap) stay instants", () => {
    fc.assert(
      fc.property(clock, (at) => {
        for (const span of [FREE_REPLACEMENT_WINDOW_MS, PROXY_TEST_KEPT_MS, PASSWORD_OVERLAP_MS, 120 * MINUTE]) {
          expectWireTime(at + span);
        }
      }),
    );
  });

  it("a usage record is counted within 400 days before its batch arrived and 5 minutes after, whatever its stamp", () => {
    const arrival = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) });
    fc.assert(
      fc.property(fc.oneof(instant, fc.constant(Number.NaN)), arrival, (ts, receivedAt) => {
        const counted = countedAt(ts, receivedAt);
        expectWireTime(counted);
        expect(counted).toBeGreaterThanOrEqual(receivedAt - USAGE_KEPT_BACK_MS);
        expect(counted).toBeLessThanOrEqual(receivedAt + USAGE_CLOCK_SKEW_MS);
        if (ts >= receivedAt - USAGE_KEPT_BACK_MS && ts <= receivedAt + USAGE_CLOCK_SKEW_MS) expect(counted).toBe(ts);
      }),
    );
  });
});

describe("figures on the wire", () => {
  it("a byte count from 0 to 1 PB as GB is finite and gives the exact bytes back", () => {
    fc.assert(
      fc.property(bytes, (count) => {
        const gb = bytesToGb(count);
        expect(Number.isFinite(gb)).toBe(true);
        expect(Math.round(gb * BYTES_PER_GB)).toBe(count);
      }),
    );
    expect(bytesToGb(PB)).toBe(1_000_000);
    expect(bytesToGb(1)).toBe(1e-9);
  });

  it("a threshold (80%, 100%) is reached exactly at the first byte that reaches it, up to 1 PB", () => {
    fc.assert(
      fc.property(
        bytes.filter((size) => size > 0),
        fc.constantFrom(80, 100),
        (size, percent) => {
          const first = Number((BigInt(size) * BigInt(percent) + 99n) / 100n);
          expect(reachesPercent(first, size, percent)).toBe(true);
          expect(reachesPercent(first - 1, size, percent)).toBe(false);
        },
      ),
    );
    // Where a double would round: 80% of 1 PB + 1 byte is 800 000 000 000 000.8 bytes.
    expect(reachesPercent(800_000_000_000_000, PB + 1, 80)).toBe(false);
    // A figure that is not a whole number of bytes is compared as it is, never refused.
    expect(reachesPercent(80.5, 100, 80)).toBe(true);
    expect(reachesPercent(79.5, 100, 80)).toBe(false);
  });

  it("an error rate is a fraction in [0, 1], 0 without requests", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: PB }), fc.integer({ min: 0, max: PB }), (a, b) => {
        const [errors, requests] = a <= b ? [a, b] : [b, a];
        const rate = fractionOf(errors, requests);
        expect(rate).toBeGreaterThanOrEqual(0);
        expect(rate).toBeLessThanOrEqual(1);
      }),
    );
    expect(fractionOf(0, 0)).toBe(0);
  });

  it("an ISP quote (up to the largest price an operator may set, 5,000 IPs, 36 months) is an exact integer of cents", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_ADMIN_USD * 100 }),
        fc.integer({ min: 5, max: 5000 }),
        fc.integer({ min: 1, max: 36 }),
        (price, quantity, months) => {
          expect(Number.isSafeInteger(ispTotal(price, { quantity, months }))).toBe(true);
        },
      ),
    );
  });
});

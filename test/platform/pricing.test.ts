import { describe, expect, it } from "vitest";
import { bandwidthTotal, cyclePrice, remainingShare } from "../../src/domain/billing/prices";
import { freeReplacementsPerPeriod } from "../../src/domain/isp/batches";
import { addMonths } from "../../src/platform/clock";

describe("pricing rules (pure)", () => {
  it("annual = 12 × monthly − 10% (spec §2.6)", () => {
    expect(cyclePrice(20000, "monthly")).toBe(20000);
    expect(cyclePrice(20000, "annual")).toBe(216000);
    expect(cyclePrice(150000, "annual")).toBe(1620000);
  });

  it("bandwidth totals are gb × price, rounded up to the cent", () => {
    expect(bandwidthTotal(10, 450)).toBe(4500);
    expect(bandwidthTotal(1.001, 800)).toBe(801);
    expect(bandwidthTotal(0.001, 450)).toBe(1);
    expect(bandwidthTotal(0.1, 450)).toBe(45);
  });

  it("adds calendar months in UTC, clamping the day to the month's length", () => {
    expect(new Date(addMonths(Date.UTC(2026, 0, 31, 8), 1)).toISOString()).toBe("2026-02-28T08:00:00.000Z");
    expect(new Date(addMonths(Date.UTC(2028, 0, 31), 1)).toISOString()).toBe("2028-02-29T00:00:00.000Z");
    expect(new Date(addMonths(Date.UTC(2026, 10, 15), 12)).toISOString()).toBe("2027-11-15T00:00:00.000Z");
  });

  it("prorates by the share of the period left", () => {
    expect(remainingShare(0, 100, 25)).toBe(0.75);
    expect(remainingShare(0, 100, 150)).toBe(0);
    expect(remainingShare(0, 100, -10)).toBe(1);
  });

  it("frees 10% of a batch per period, rounded up", () => {
    expect(freeReplacementsPerPeriod(5)).toBe(1);
    expect(freeReplacementsPerPeriod(20)).toBe(2);
    expect(freeReplacementsPerPeriod(21)).toBe(3);
    expect(freeReplacementsPerPeriod(5000)).toBe(500);
  });
});

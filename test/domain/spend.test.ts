import { describe, expect, it } from "vitest";
import { shortfallCost } from "../../src/domain/billing/balance-watch";
import { thresholdsReached } from "../../src/domain/billing/budget";
import { budgetMonth } from "../../src/domain/billing/spend";

describe("budget months", () => {
  it("are UTC calendar months: from the first instant of the month to the first of the next", () => {
    expect(budgetMonth(Date.UTC(2026, 0, 31, 23, 59, 59, 999))).toEqual({
      month: "2026-01",
      from: Date.UTC(2026, 0, 1),
      to: Date.UTC(2026, 1, 1),
    });
    expect(budgetMonth(Date.UTC(2026, 1, 1))).toMatchObject({ month: "2026-02", from: Date.UTC(2026, 1, 1) });
    expect(budgetMonth(Date.UTC(2026, 11, 15))).toMatchObject({ to: Date.UTC(2027, 0, 1) });
  });
});

describe("thresholds reached", () => {
  it("counts a threshold reached when the spend equals it, in exact integer arithmetic", () => {
    expect(thresholdsReached(5000, 10000, [50, 80, 100])).toEqual([50]);
    expect(thresholdsReached(4999, 10000, [50, 80, 100])).toEqual([]);
    expect(thresholdsReached(10000, 10000, [50, 80, 100])).toEqual([50, 80, 100]);
    expect(thresholdsReached(12000, 10000, [100, 120, 150])).toEqual([100, 120]);
    // 1 cent of 3 is 33.3 %: it reaches 33 % (100 ≥ 99), not 34 % (100 < 102).
    expect(thresholdsReached(1, 3, [33, 34])).toEqual([33]);
  });
});

describe("the forecast's shortfall cost", () => {
  const PER_GB = 450;

  it("is nothing while the pool holds what the next days are expected to use", () => {
    expect(shortfallCost(5e9, 5e9, PER_GB)).toBe(0);
    expect(shortfallCost(0, 0, PER_GB)).toBe(0);
    expect(shortfallCost(Number.NaN, 0, PER_GB)).toBe(0);
  });

  it("prices the bytes beyond the pool in whole MB, rounded up to the cent, as an order would", () => {
    expect(shortfallCost(3e9, 1e9, PER_GB)).toBe(900);
    // One byte over is one MB: 0.001 GB × 4.50 = 0.45 cents, rounded up to 1 cent.
    expect(shortfallCost(1e9 + 1, 1e9, PER_GB)).toBe(1);
  });

  it("counts an overdrawn pool as empty, not as a credit", () => {
    expect(shortfallCost(1e9, -5e9, PER_GB)).toBe(450);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { standingShare } from "../../src/platform/standing-shares";

describe("standing shares: a quiet sub-user's limits split over the fleet's node slots", () => {
  it("the parts of all slots sum to the limit exactly, and no two differ by more than one", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 1024 }),
        fc.string(),
        (limit, slots, name) => {
          const parts = Array.from({ length: slots }, (_, slot) => standingShare(limit, slots, slot, name));
          expect(parts.reduce((sum, part) => sum + part, 0)).toBe(limit);
          expect(Math.max(...parts) - Math.min(...parts)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it("a slot outside the fleet's has no part", () => {
    expect(standingShare(10, 4, 4, "s1")).toBe(0);
    expect(standingShare(10, 4, -1, "s1")).toBe(0);
    expect(standingShare(10, 0, 0, "s1")).toBe(0);
  });

  it("the units that do not divide evenly go to different slots for different sub-users", () => {
    const firstSlotWithMore = (name: string) =>
      [0, 1, 2, 3, 4, 5, 6, 7].find((slot) => standingShare(1, 8, slot, name));
    const slots = new Set(Array.from({ length: 50 }, (_, i) => firstSlotWithMore(`s${i}`)));
    expect(slots.size).toBeGreaterThan(4);
  });
});

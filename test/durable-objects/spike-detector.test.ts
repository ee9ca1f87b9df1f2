import { describe, expect, it } from "vitest";
import {
  type Baseline,
  baselineHours,
  baselineOf,
  canOpen,
  isIdle,
  judgeStep,
  newTrack,
  openingLevel,
  pushStep,
  SENSITIVITY,
  type SpikeTrack,
  trailingRate,
  type Usage,
} from "../../src/durable-objects/traffic-store/spike-detector";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
const GB = 1e9;
const STEP = 5 * MINUTE;

const noHistory: Baseline = { rate: [0, 0], spread: [0, 0], weeks: 0, days: 0 };

/** Pushes steps of `usage` (per 5 minutes) and judges each; the outcomes in order. */
function run(track: SpikeTrack, steps: Usage[], baseline: Baseline, sensitivity: "low" | "medium" | "high", t0 = 0) {
  return steps.map((usage, i) => {
    pushStep(track, usage);
    return judgeStep(track, t0 + i * STEP, baseline, sensitivity);
  });
}

const repeat = (usage: Usage, n: number): Usage[] => Array.from({ length: n }, () => usage);

describe("spike detector: the baseline", () => {
  it("reads the same hour ±1 in each of the 4 past weeks, the latest first, and in each of the 6 past days", () => {
    const hour = Date.UTC(2026, 10, 23, 14);
    const around = (t: number) => [t - HOUR, t, t + HOUR];
    expect(baselineHours(hour)).toEqual({
      weeks: [1, 2, 3, 4].map((w) => around(hour - w * WEEK)),
      days: [1, 2, 3, 4, 5, 6].map((d) => around(hour - d * DAY)),
    });
  });

  it("is the median and median absolute deviation of the busiest hour of each week that had usage; none at all is a new sub-user", () => {
    const week = (bytes: number[]): Usage[] => bytes.map((b) => [b * GB, b * 1000]);
    const quiet = week([0, 0, 0]);
    const baseline = baselineOf([week([1, 2, 3]), quiet, week([2, 2, 10]), week([0, 4, 0])], [week([50, 50, 50])]);
    // Week 2 had nothing in the window: left out. The others' busiest hours 3, 10, 4 → median 4, deviations 1, 6, 0
    // → median 1. With 3 weeks of history the past days are not read.
    expect(baseline).toEqual({ rate: [4 * GB, 4000], spread: [1 * GB, 1000], weeks: 3, days: 0 });
    expect(baselineOf([quiet, quiet], [quiet])).toEqual(noHistory);
  });

  it("reads the past days while fewer than 2 weeks had usage: a sub-user in its first weeks", () => {
    const hours = (bytes: number): Usage[] => [
      [bytes * GB, bytes * 10],
      [bytes * GB, bytes * 10],
      [bytes * GB, bytes * 10],
    ];
    const quiet = hours(0);
    const days = [hours(4), hours(4), quiet, hours(5), quiet, quiet];
    expect(baselineOf([quiet, quiet, quiet, quiet], days)).toMatchObject({ rate: [4 * GB, 40], weeks: 0, days: 3 });
    expect(baselineOf([hours(1), quiet, quiet, quiet], days)).toMatchObject({ rate: [4 * GB, 40], weeks: 1, days: 3 });
    expect(baselineOf([hours(1), hours(1), quiet, quiet], days)).toMatchObject({
      rate: [1 * GB, 10],
      weeks: 2,
      days: 0,
    });
  });

  it("one spiking week among four does not move the median", () => {
    const steady: Usage[] = [
      [1 * GB, 1000],
      [1 * GB, 1000],
      [1 * GB, 1000],
    ];
    const spiked: Usage[] = [
      [1 * GB, 1000],
      [90 * GB, 90_000],
      [80 * GB, 80_000],
    ];
    expect(baselineOf([spiked, steady, steady, steady]).rate).toEqual([1 * GB, 1000]);
  });
});

describe("spike detector: thresholds", () => {
  it("opens above max(floor, baseline + spreads × robust spread, min(ratio × baseline, baseline + excess)), per sensitivity", () => {
    const baseline: Baseline = { rate: [10 * GB, 100_000], spread: [0.1 * GB, 100], weeks: 4, days: 0 };
    // The excess binds at high and medium (10 + 8 < 20, 10 + 15 < 30), the ratio at low (50 < 10 + 40).
    expect(openingLevel(baseline, "high")).toEqual([18 * GB, 180_000]);
    expect(openingLevel(baseline, "medium")).toEqual([25 * GB, 250_000]);
    expect(openingLevel(baseline, "low")).toEqual([50 * GB, 500_000]);
    const noisy: Baseline = { rate: [10 * GB, 100_000], spread: [5 * GB, 100], weeks: 4, days: 0 };
    expect(openingLevel(noisy, "medium")[0] / GB).toBeCloseTo(10 + 6 * 1.4826 * 5);
    expect(openingLevel(noHistory, "medium")).toEqual(SENSITIVITY.medium.floor);
    // A busy sub-user: 15 GB/h more counts at medium, where tripling it would take 80 more.
    const busy: Baseline = { rate: [40 * GB, 400_000], spread: [1 * GB, 1000], weeks: 4, days: 0 };
    expect(openingLevel(busy, "medium")).toEqual([55 * GB, 550_000]);
  });

  it("canOpen is false under the sensitivity's floor, so such steps need no baseline", () => {
    expect(canOpen([1.9 * GB, 39_999], "medium")).toBe(false);
    expect(canOpen([2.1 * GB, 0], "medium")).toBe(true);
    expect(canOpen([0, 40_001], "medium")).toBe(true);
    expect(canOpen([1.5 * GB, 0], "high")).toBe(true);
  });
});

describe("spike detector: episodes", () => {
  it("the trailing rate is the last 15 minutes per hour", () => {
    const track = newTrack();
    for (const usage of repeat([1 * GB, 100], 5)) pushStep(track, usage);
    expect(trailingRate(track)).toEqual([12 * GB, 1200]);
    expect(track.recent).toHaveLength(3);
  });

  it("opens once after two steps above the level, dated from the first of them, and closes after 30 minutes back under", () => {
    const track = newTrack();
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0.1 * GB, 1000], weeks: 4, days: 0 };
    // 1 GB/h is 1/12 GB per 5 minutes; a leak of 20 GB/h is 5/3 GB per step.
    const quiet = repeat([GB / 12, 800], 6);
    const leak = repeat([(20 * GB) / 12, 1000], 12);
    const outcomes = run(track, [...quiet, ...leak, ...quiet, ...quiet], baseline, "medium");
    expect(outcomes.filter((o) => o === "opened")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "closed")).toHaveLength(1);
    const openedAt = outcomes.indexOf("opened");
    // Step 6 is the leak's first: the trailing 15 minutes pass 3 GB/h at once, the second step opens.
    expect(openedAt).toBe(7);
    expect(track.episode).toBeNull();
    expect(isIdle(track)).toBe(false);
    run(track, repeat([0, 0], 3), baseline, "medium");
    expect(isIdle(track)).toBe(true);
    // The episode closed 6 steps after the rate fell under the closing level, not before.
    expect(outcomes.indexOf("closed")).toBeGreaterThan(6 + 12 + 5);
  });

  it("records the episode's start, its observed rate, baseline, peak and totals", () => {
    const track = newTrack();
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0, 0], weeks: 4, days: 0 };
    run(track, [...repeat([0, 0], 3), ...repeat([(24 * GB) / 12, 1000], 3)], baseline, "medium", 1_000_000);
    expect(track.episode).toMatchObject({ startedAt: 1_000_000 + 3 * STEP, baseline });
    expect(track.episode?.peak[0]).toBeCloseTo(24 * GB);
    expect(track.episode?.total[0]).toBeCloseTo(6 * GB);
  });

  it("a new sub-user is judged against the floor alone: under it nothing opens, over it an episode does", () => {
    const under = newTrack();
    expect(run(under, repeat([(1.5 * GB) / 12, 100], 24), noHistory, "medium")).not.toContain("opened");
    const over = newTrack();
    expect(run(over, repeat([(3 * GB) / 12, 100], 24), noHistory, "medium")).toContain("opened");
  });

  it("sensitivity moves the threshold: the same surge opens at high, not at low", () => {
    const baseline: Baseline = { rate: [2 * GB, 10_000], spread: [0.2 * GB, 1000], weeks: 4, days: 0 };
    const surge = [...repeat([(2 * GB) / 12, 800], 3), ...repeat([(7 * GB) / 12, 800], 12)];
    expect(run(newTrack(), surge, baseline, "high")).toContain("opened");
    expect(run(newTrack(), surge, baseline, "medium")).toContain("opened");
    expect(run(newTrack(), surge, baseline, "low")).not.toContain("opened");
  });

  it("requests alone can open an episode (many small requests)", () => {
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0, 0], weeks: 4, days: 0 };
    const burst = repeat([GB / 12, 100_000 / 12], 4);
    expect(run(newTrack(), burst, baseline, "medium")).toContain("opened");
  });

  it("a single burst step does not open one, though it keeps the trailing rate up for 15 minutes", () => {
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0.1 * GB, 500], weeks: 4, days: 0 };
    const steps = [...repeat([GB / 12, 800], 3), [(60 * GB) / 12, 800] as Usage, ...repeat([GB / 12, 800], 6)];
    expect(run(newTrack(), steps, baseline, "medium")).not.toContain("opened");
  });
});

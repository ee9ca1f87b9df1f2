import { describe, expect, it } from "vitest";
import {
  type Baseline,
  baselineHours,
  baselineOf,
  canOpen,
  isIdle,
  judgeStep,
  LESSON_MAX,
  LESSON_MS,
  lessonOf,
  newTrack,
  openingLevel,
  pushStep,
  REPEAT_RATIO,
  REPEAT_SURGE,
  type Recent,
  SENSITIVITY,
  type SpikeTrack,
  taughtBaseline,
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

/** As `run`, with what the hour tier says of the last hours at every step. */
function runWith(track: SpikeTrack, steps: Usage[], baseline: Baseline, recent: Recent, t0 = 0) {
  return steps.map((usage, i) => {
    pushStep(track, usage);
    return judgeStep(track, t0 + i * STEP, baseline, "medium", recent);
  });
}

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
  it("rule: a step must pass max(floor, baseline + stake, ratio × baseline, baseline + spreads × robust spread) in bytes", () => {
    const baseline: Baseline = { rate: [10 * GB, 100_000], spread: [0.1 * GB, 100], weeks: 4, days: 0 };
    // The ratio binds: 1.5 × 10 at high (10 + 3 < 15), 2 × 10 at medium (10 + 6 < 20), 3 × 10 at low (10 + 15 < 30).
    expect(openingLevel(baseline, "high")).toBe(15 * GB);
    expect(openingLevel(baseline, "medium")).toBe(20 * GB);
    expect(openingLevel(baseline, "low")).toBe(30 * GB);
    // A small sub-user: the money at stake binds (1 + 6 GB/h at medium, where doubling would be 2).
    const small: Baseline = { rate: [1 * GB, 1000], spread: [0.1 * GB, 100], weeks: 4, days: 0 };
    expect(openingLevel(small, "medium")).toBe(7 * GB);
    const noisy: Baseline = { rate: [10 * GB, 100_000], spread: [5 * GB, 100], weeks: 4, days: 0 };
    expect(openingLevel(noisy, "medium") / GB).toBeCloseTo(10 + 6 * 1.4826 * 5);
  });

  it("rule: a sub-user with no history at this hour is judged against the first floor (50 GB/h at medium)", () => {
    expect(openingLevel(noHistory, "medium")).toBe(SENSITIVITY.medium.firstFloor);
    expect(openingLevel({ ...noHistory, days: 1 }, "medium")).toBe(SENSITIVITY.medium.stake);
  });

  it("rule: canOpen is false at or under the stake, so such steps need no baseline; requests never count", () => {
    expect(canOpen([5.9 * GB, 10_000_000], "medium")).toBe(false);
    expect(canOpen([6.1 * GB, 0], "medium")).toBe(true);
    expect(canOpen([3.5 * GB, 0], "high")).toBe(true);
  });
});

describe("spike detector: lessons", () => {
  it("rule: a lesson raises the baseline to the taught rate until it lapses, never lowers it", () => {
    const baseline: Baseline = { rate: [2 * GB, 1000], spread: [0, 0], weeks: 4, days: 0 };
    const lesson = lessonOf("spk_x", [9 * GB, 500], 0);
    expect(lesson).toEqual({ spikeId: "spk_x", rate: [9 * GB, 500], until: LESSON_MS });
    expect(taughtBaseline(baseline, lesson, LESSON_MS - 1).rate).toEqual([9 * GB, 1000]);
    expect(taughtBaseline(baseline, lesson, LESSON_MS)).toEqual(baseline);
    expect(taughtBaseline(baseline, undefined, 0)).toEqual(baseline);
  });

  it("rule: a lesson is bounded: at most 100 GB and 1,000,000 requests an hour, for 28 days", () => {
    expect(lessonOf("spk_x", [500 * GB, 9_000_000], 1000)).toEqual({
      spikeId: "spk_x",
      rate: LESSON_MAX,
      until: 1000 + 28 * DAY,
    });
  });
});

describe("spike detector: episodes", () => {
  it("the trailing rate is the last 15 minutes per hour", () => {
    const track = newTrack();
    for (const usage of repeat([1 * GB, 100], 5)) pushStep(track, usage);
    expect(trailingRate(track)).toEqual([12 * GB, 1200]);
    expect(track.recent).toHaveLength(3);
  });

  it("rule: a surge of 10 × the baseline or more opens after two steps above, dated from the first; it closes after 30 minutes back under", () => {
    const track = newTrack();
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0.1 * GB, 1000], weeks: 4, days: 0 };
    // 1 GB/h is 1/12 GB per 5 minutes; a leak of 20 GB/h is 5/3 GB per step.
    const quiet = repeat([GB / 12, 800], 6);
    const leak = repeat([(20 * GB) / 12, 1000], 12);
    const outcomes = run(track, [...quiet, ...leak, ...quiet, ...quiet], baseline, "medium");
    expect(outcomes.filter((o) => o === "opened")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "closed")).toHaveLength(1);
    const openedAt = outcomes.indexOf("opened");
    // Step 6 is the leak's first: the trailing 15 minutes pass 7 GB/h at once, the second step opens.
    expect(openedAt).toBe(7);
    expect(track.episode).toBeNull();
    expect(isIdle(track)).toBe(false);
    run(track, repeat([0, 0], 3), baseline, "medium");
    expect(isIdle(track)).toBe(true);
    // The episode closed 6 steps after the rate fell under the closing level, not before.
    expect(outcomes.indexOf("closed")).toBeGreaterThan(6 + 12 + 5);
  });

  it("rule: a smaller surge must hold for 30 minutes (6 steps) before it opens", () => {
    const baseline: Baseline = { rate: [5 * GB, 10_000], spread: [0.1 * GB, 1000], weeks: 4, days: 0 };
    const usual = repeat([(5 * GB) / 12, 800], 15);
    // 16 GB/h: over 2 × 5 and 5 + 6, under 10 × 5.
    const surge = repeat([(16 * GB) / 12, 800], 8);
    const outcomes = run(newTrack(), [...usual, ...surge], baseline, "medium");
    // Its first step leaves the trailing 15 minutes under 11 GB/h; from the second on, six steps above.
    expect(outcomes.indexOf("opened")).toBe(15 + 6);
    // Six steps of it (five above) and back: nothing.
    expect(run(newTrack(), [...usual, ...surge.slice(0, 6), ...usual], baseline, "medium")).not.toContain("opened");
  });

  it("rule: a rise must be sudden: a sub-user that grew over the last hours is not a spike", () => {
    const baseline: Baseline = { rate: [5 * GB, 10_000], spread: [0.1 * GB, 1000], weeks: 4, days: 0 };
    // From 5 GB/h up to 16 GB/h a little each step: each step is within 1.5 × the hour before it.
    const ramp = Array.from({ length: 48 }, (_, i): Usage => [((5 + (11 * i) / 47) * GB) / 12, 800]);
    const held = repeat([(16 * GB) / 12, 800], 12);
    expect(run(newTrack(), [...ramp, ...held], baseline, "medium")).not.toContain("opened");
  });

  it("rule: a sub-user about to get busy (a daily job starting) opens only above 4 × its baseline", () => {
    const baseline: Baseline = { rate: [10 * GB, 10_000], spread: [0.1 * GB, 1000], weeks: 4, days: 0 };
    const idle = repeat([(0.1 * GB) / 12, 10], 15);
    const biggerJob = repeat([(35 * GB) / 12, 800], 8);
    const leak = repeat([(45 * GB) / 12, 800], 8);
    expect(run(newTrack(), [...idle, ...biggerJob], baseline, "medium")).not.toContain("opened");
    expect(run(newTrack(), [...idle, ...leak], baseline, "medium")).toContain("opened");
  });

  it("rule: a daily job an hour into its run is judged against its previous clock hour, which its rise does not pull up", () => {
    const baseline: Baseline = { rate: [10 * GB, 10_000], spread: [0.5 * GB, 1000], weeks: 4, days: 0 };
    // The job ran 2.5 × its usual for the whole last hour (held back then as a job starting under 4 × its baseline).
    const grown = repeat([(25 * GB) / 12, 800], 12);
    const lastHour = 25 * GB;
    const t0 = 10 * HOUR;
    const quiet: Recent = { lastHour: 0.2 * GB, yesterday: null, yesterdayUsual: null };
    const busy: Recent = { lastHour, yesterday: null, yesterdayUsual: null };
    // Without the hour tier, the running prior follows the job up slowly and the second hour opens an episode.
    const track = newTrack();
    run(track, repeat([(0.2 * GB) / 12, 10], 24), baseline, "medium", t0 - 2 * HOUR);
    track.prior = 8 * GB;
    expect(runWith(track, grown, baseline, { ...busy, lastHour: null }, t0)).toContain("opened");
    const judged = newTrack();
    runWith(judged, repeat([(0.2 * GB) / 12, 10], 24), baseline, quiet, t0 - 2 * HOUR);
    judged.prior = 8 * GB;
    expect(runWith(judged, grown, baseline, busy, t0)).not.toContain("opened");
    // A leak on top of it, 1.5 × the last hour and more, still opens.
    const leaking = newTrack();
    leaking.prior = 8 * GB;
    expect(runWith(leaking, repeat([(60 * GB) / 12, 800], 8), baseline, busy, t0)).toContain("opened");
  });

  it("rule: the previous clock hour counts only while the rise started in this one (a leak is not judged against itself)", () => {
    const baseline: Baseline = { rate: [10 * GB, 10_000], spread: [0.5 * GB, 1000], weeks: 4, days: 0 };
    const track = newTrack();
    run(track, repeat([(10 * GB) / 12, 800], 15), baseline, "medium", 9 * HOUR);
    // A leak from 9:45, above from then; from 10:00 the last hour (9:00–10:00) holds part of it, here so much that
    // 30 GB/h would not be 1.5 × it: it is not read, the rise having started before 10:00.
    const leak = repeat([(30 * GB) / 12, 800], 8);
    const recent: Recent = { lastHour: 25 * GB, yesterday: null, yesterdayUsual: null };
    const outcomes = leak.map((usage, i) => {
      pushStep(track, usage);
      const at = 9 * HOUR + 45 * MINUTE + i * STEP;
      return judgeStep(track, at, baseline, "medium", at < 10 * HOUR ? { ...recent, lastHour: 10 * GB } : recent);
    });
    expect(outcomes).toContain("opened");
  });

  it(`rule: a repeat of yesterday's surge at this hour (above ${REPEAT_SURGE} × yesterday's baseline) must pass ${REPEAT_RATIO} × it`, () => {
    const baseline: Baseline = { rate: [10 * GB, 10_000], spread: [0.5 * GB, 1000], weeks: 4, days: 0 };
    const surge = repeat([(28 * GB) / 12, 800], 8);
    const before = repeat([(10 * GB) / 12, 800], 15);
    const yesterdaySurged: Recent = { lastHour: 10 * GB, yesterday: 26 * GB, yesterdayUsual: 10 * GB };
    const yesterdayUsual: Recent = { lastHour: 10 * GB, yesterday: 26 * GB, yesterdayUsual: 20 * GB };
    const judge = (recent: Recent) => {
      const track = newTrack();
      runWith(track, before, baseline, recent);
      return runWith(track, surge, baseline, recent, HOUR + 15 * STEP);
    };
    // Yesterday did the same at this hour: a daily job that grew, not a new spike.
    expect(judge(yesterdaySurged)).not.toContain("opened");
    // Yesterday was busy but usual for it (a weekday before a weekend day): today's surge opens.
    expect(judge(yesterdayUsual)).toContain("opened");
    // Twice yesterday's surge opens even after one.
    const track = newTrack();
    runWith(track, before, baseline, yesterdaySurged);
    expect(runWith(track, repeat([(55 * GB) / 12, 800], 8), baseline, yesterdaySurged)).toContain("opened");
  });

  it("records the episode's start, its observed rate, baseline, peak and totals", () => {
    const track = newTrack();
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0, 0], weeks: 4, days: 0 };
    run(track, [...repeat([GB / 12, 800], 15), ...repeat([(24 * GB) / 12, 1000], 3)], baseline, "medium", 1_000_000);
    expect(track.episode).toMatchObject({ startedAt: 1_000_000 + 15 * STEP, baseline });
    expect(track.episode?.peak[0]).toBeCloseTo(24 * GB);
    expect(track.episode?.total[0]).toBeCloseTo((24 * GB) / 12 + (24 * GB) / 12 + GB / 12 + (24 * GB) / 12, -3);
  });

  it("rule: a new sub-user is judged against the first floor alone: under it nothing opens, over it an episode does", () => {
    const under = newTrack();
    expect(run(under, repeat([(40 * GB) / 12, 100], 24), noHistory, "medium")).not.toContain("opened");
    const over = newTrack();
    expect(run(over, repeat([(60 * GB) / 12, 100], 24), noHistory, "medium")).toContain("opened");
  });

  it("sensitivity moves the threshold: the same surge opens at high, not at low", () => {
    const baseline: Baseline = { rate: [2 * GB, 10_000], spread: [0.2 * GB, 1000], weeks: 4, days: 0 };
    const surge = [...repeat([(2 * GB) / 12, 800], 15), ...repeat([(12 * GB) / 12, 800], 12)];
    expect(run(newTrack(), surge, baseline, "high")).toContain("opened");
    expect(run(newTrack(), surge, baseline, "medium")).toContain("opened");
    expect(run(newTrack(), surge, baseline, "low")).not.toContain("opened");
  });

  it("rule: requests alone never open an episode: no traffic, no money at stake", () => {
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0, 0], weeks: 4, days: 0 };
    const burst = repeat([GB / 12, 1_000_000 / 12], 12);
    expect(run(newTrack(), burst, baseline, "medium")).not.toContain("opened");
  });

  it("a single burst step does not open one, though it keeps the trailing rate up for 15 minutes", () => {
    const baseline: Baseline = { rate: [1 * GB, 10_000], spread: [0.1 * GB, 500], weeks: 4, days: 0 };
    const steps = [...repeat([GB / 12, 800], 15), [(60 * GB) / 12, 800] as Usage, ...repeat([GB / 12, 800], 6)];
    expect(run(newTrack(), steps, baseline, "medium")).not.toContain("opened");
  });
});

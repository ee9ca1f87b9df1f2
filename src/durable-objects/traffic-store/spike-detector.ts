import { HOUR, MINUTE } from "../../platform/clock";
import type { Lesson, SpikeSensitivity } from "./contract";

/**
 * The spike detector's pure rules (no storage): a sub-user's trailing rate of bytes against its own baseline, the
 * same hour of the week ±1 hour over up to 4 past weeks, or its last days while it has less than 2 weeks of
 * history, and against its own last hour (docs/decisions.md, "Spike alerts"). Requests are carried for the figures
 * and the `cap` action; only bytes, the traffic that is billed, open an episode. The traffic store runs it once per
 * folded 5-minute bucket; `bench/spike-detection.mjs` runs it on seeded history.
 */

/** Usage in a span, or a rate per hour: bytes (in + out) and requests. */
export type Usage = [bytes: number, requests: number];

/** One detector step per folded 5-minute bucket. */
export const SPIKE_STEP_MS = 5 * MINUTE;
/** The observed rate: the last 3 steps (15 minutes), per hour. */
const TRAILING_STEPS = 3;
const PER_HOUR = HOUR / (TRAILING_STEPS * SPIKE_STEP_MS);
const STEPS_PER_HOUR = HOUR / SPIKE_STEP_MS;
/** Past weeks the baseline reads (the hour tier keeps 92 days). */
const BASELINE_WEEKS = 4;
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;
/** An episode ends after the trailing rate stayed under its closing level this many steps (30 minutes). */
const CLOSE_STEPS = 6;
/** The scale of a median absolute deviation as a standard deviation of normal noise. */
const MAD_SCALE = 1.4826;

/**
 * Per sensitivity, what opens an episode. A step is above when its bytes rate (the lower of the step's own and the
 * trailing 15 minutes') passes every one of:
 * - the money at stake: the baseline + `stake` (so much traffic an hour over the usual is worth waking someone);
 * - the level: max(floor, baseline × ratio, baseline + spreads × robust spread);
 * - a sudden rise: `jump` × the sub-user's own rate in the hour before (`prior`), so a sub-user that grows over a
 *   day is not a spike;
 * - for a sub-user about to get busy (its prior under half its baseline, e.g. a daily job starting), the baseline ×
 *   `startRatio`: a job a little bigger than usual is not a spike;
 * - for a sub-user with no history at this hour (new, or back after a month), `firstFloor`;
 * - where yesterday surged at this hour, `REPEAT_RATIO` × yesterday's level (`Recent`, from the hour tier).
 * It opens after `openSteps` steps in a row above at `quickRatio` × the baseline or more, else after `slowSteps`
 * (a smaller surge must last longer: 5-minute noise does not).
 */
export const SENSITIVITY: Record<
  SpikeSensitivity,
  {
    stake: number;
    ratio: number;
    spreads: number;
    jump: number;
    startRatio: number;
    firstFloor: number;
    quickRatio: number;
    floor: Usage;
    openSteps: number;
    slowSteps: number;
  }
> = {
  high: {
    stake: 3e9,
    ratio: 1.5,
    spreads: 4,
    jump: 1.3,
    startRatio: 3,
    firstFloor: 20e9,
    quickRatio: 5,
    floor: [1e9, 20_000],
    openSteps: 2,
    slowSteps: 4,
  },
  medium: {
    stake: 6e9,
    ratio: 2,
    spreads: 6,
    jump: 1.5,
    startRatio: 4,
    firstFloor: 50e9,
    quickRatio: 10,
    floor: [2e9, 40_000],
    openSteps: 2,
    slowSteps: 6,
  },
  low: {
    stake: 15e9,
    ratio: 3,
    spreads: 10,
    jump: 2,
    startRatio: 6,
    firstFloor: 100e9,
    quickRatio: 20,
    floor: [10e9, 200_000],
    openSteps: 3,
    slowSteps: 8,
  },
};

/** The prior rate: an average of the steps before the trailing window, over about an hour (weight 1/12 a step). */
const PRIOR_STEPS = 12;

/**
 * A repeat: yesterday's busiest hour of the same hour ±1 was above this × yesterday's own baseline (it surged then),
 * so today's step must pass `REPEAT_RATIO` × that hour too. A daily job that grew, or a sub-user that settled
 * higher, is judged against what it did yesterday, not only against its weeks (which learn it in 2 to 3 weeks).
 */
export const REPEAT_SURGE = 1.5;
export const REPEAT_RATIO = 2;

/**
 * What the hour tier says of the sub-user's last hours (bytes per hour), for the rules on rises and repeats: its
 * previous clock hour (complete), yesterday's busiest hour of the same hour ±1 and yesterday's baseline there. Null
 * where unknown (the rule then does not apply).
 */
export interface Recent {
  lastHour: number | null;
  yesterday: number | null;
  yesterdayUsual: number | null;
}

export const NO_RECENT: Recent = { lastHour: null, yesterday: null, yesterdayUsual: null };

export interface Baseline {
  /** Median of the windows' busiest hours, per hour. */
  rate: Usage;
  /** Their median absolute deviation. */
  spread: Usage;
  /** Past weeks with usage in the window (0 and no days: a new sub-user, the floor alone). */
  weeks: number;
  /** Past days read too, while fewer than 2 weeks had usage (a sub-user in its first weeks). */
  days: number;
}

/** Past days read while a sub-user has fewer than this many weeks of history in the window. */
const DAYS_BELOW_WEEKS = 2;
const FALLBACK_DAYS = 6;

/**
 * The hours whose usage makes the baseline of `hour`, as windows of the same hour ±1: one per past week (the latest
 * first), and one per past day (1 to 6 days back) for a sub-user with little history (`days[0]`, yesterday's, is
 * also what the repeat rule reads: `Recent`).
 */
export function baselineHours(hour: number): { weeks: number[][]; days: number[][] } {
  const around = (same: number) => [same - HOUR, same, same + HOUR];
  return {
    weeks: Array.from({ length: BASELINE_WEEKS }, (_, i) => around(hour - (i + 1) * WEEK)),
    days: Array.from({ length: FALLBACK_DAYS }, (_, i) => around(hour - (i + 1) * DAY)),
  };
}

/**
 * The baseline from each window's usage (`baselineHours`): per window its busiest hour, then the median of those
 * over the weeks that had usage there and their median absolute deviation. The busiest of the same hour ±1 lets a
 * job that starts a little earlier or ends a little later than last week still count as usual. A week without any
 * usage is left out (zeros from before a sub-user existed would hide its real level). With fewer than 2 such weeks,
 * the past days' windows with usage are added: a sub-user in its first weeks is measured against its own last days
 * rather than the floor alone.
 */
export function baselineOf(weeks: Usage[][], days: Usage[][] = []): Baseline {
  const usedWeeks = weeks.filter(hasUsage);
  const usedDays = usedWeeks.length < DAYS_BELOW_WEEKS ? days.filter(hasUsage) : [];
  const peaks = [...usedWeeks, ...usedDays].map(
    (hours): Usage => [Math.max(...hours.map((h) => h[0])), Math.max(...hours.map((h) => h[1]))],
  );
  if (peaks.length === 0) return { rate: [0, 0], spread: [0, 0], weeks: 0, days: 0 };
  const rate: Usage = [median(peaks.map((p) => p[0])), median(peaks.map((p) => p[1]))];
  const spread: Usage = [
    median(peaks.map((p) => Math.abs(p[0] - rate[0]))),
    median(peaks.map((p) => Math.abs(p[1] - rate[1]))),
  ];
  return { rate, spread, weeks: usedWeeks.length, days: usedDays.length };
}

function hasUsage(hours: Usage[]): boolean {
  return hours.some(([bytes, requests]) => bytes > 0 || requests > 0);
}

/** How long a lesson lasts: the baseline's own 4 weeks, by when a lasting level is in them. */
export const LESSON_MS = BASELINE_WEEKS * WEEK;
/** The most a lesson teaches, per metric: acknowledging a leak by mistake still leaves a faster one to be caught. */
export const LESSON_MAX: Usage = [100e9, 1_000_000];

/** The lesson an episode's peak teaches from `at`, bounded. */
export function lessonOf(spikeId: string, peak: Usage, at: number): Lesson {
  return {
    spikeId,
    rate: [Math.min(peak[0], LESSON_MAX[0]), Math.min(peak[1], LESSON_MAX[1])],
    until: at + LESSON_MS,
  };
}

/** The baseline as a lesson still running at `at` raises it (per metric, never lower). */
export function taughtBaseline(baseline: Baseline, lesson: Lesson | undefined, at: number): Baseline {
  if (!lesson || lesson.until <= at) return baseline;
  return {
    ...baseline,
    rate: [Math.max(baseline.rate[0], lesson.rate[0]), Math.max(baseline.rate[1], lesson.rate[1])],
  };
}

/**
 * The bytes rate per hour a step must pass against the baseline alone: the money at stake, the level, and for a
 * sub-user with no history, the first floor (the sudden-rise rules need the track too: `judgeStep`).
 */
export function openingLevel(baseline: Baseline, sensitivity: SpikeSensitivity): number {
  const level = usualLevel(baseline, sensitivity);
  const fresh = baseline.weeks === 0 && baseline.days === 0;
  return fresh ? Math.max(level, SENSITIVITY[sensitivity].firstFloor) : level;
}

/** The opening level but for the first floor: what an open episode's closing level is measured from. */
function usualLevel(baseline: Baseline, sensitivity: SpikeSensitivity): number {
  const { stake, ratio, spreads, floor } = SENSITIVITY[sensitivity];
  const rate = baseline.rate[0];
  return Math.max(floor[0], rate + stake, rate * ratio, rate + spreads * MAD_SCALE * baseline.spread[0]);
}

/**
 * A quarter of the way from the baseline to the opening level: an episode ends once the bytes rate stays below it
 * (a sub-user that settled at a new level stays in one episode until its baseline has learnt the level, rather
 * than opening one on every busy hour).
 */
function closingLevel(baseline: Baseline, opening: number): number {
  return baseline.rate[0] + (opening - baseline.rate[0]) / 4;
}

/** Whether a trailing rate can open an episode at a sensitivity whatever the baseline: below the stake, no baseline is read. */
export function canOpen(rate: Usage, sensitivity: SpikeSensitivity): boolean {
  return rate[0] > SENSITIVITY[sensitivity].stake;
}

/** One sub-user's detector state: its last steps' usage and how long its rate has been above or below. */
export interface SpikeTrack {
  /** Usage of the latest steps, oldest first (at most 3). */
  recent: Usage[];
  /**
   * The bytes rate per hour before the trailing window: an average over about an hour of the steps that left it,
   * held while the rate is above (null until a step has left it).
   */
  prior: number | null;
  /** Steps in a row above the opening level, and when the first of them started. */
  above: number;
  aboveSince: number | null;
  /** Steps in a row below the closing level during an episode. */
  below: number;
  episode: EpisodeState | null;
}

export interface EpisodeState {
  startedAt: number;
  /** The trailing rate and baseline when it opened. */
  observed: Usage;
  baseline: Baseline;
  peak: Usage;
  /** Usage of its steps. */
  total: Usage;
}

export function newTrack(): SpikeTrack {
  return { recent: [], prior: null, above: 0, aboveSince: null, below: 0, episode: null };
}

/** The trailing rate per hour: the last 3 steps' usage (missing steps count as none). */
export function trailingRate(track: SpikeTrack): Usage {
  let bytes = 0;
  let requests = 0;
  for (const [b, r] of track.recent) {
    bytes += b;
    requests += r;
  }
  return [bytes * PER_HOUR, requests * PER_HOUR];
}

/**
 * Adds a step's usage to the trailing window (in place); the step leaving it moves the prior rate, unless the rate
 * is above (a rise is judged against the hour before it, not against its own first steps).
 */
export function pushStep(track: SpikeTrack, usage: Usage): void {
  track.recent.push(usage);
  if (track.recent.length <= TRAILING_STEPS) return;
  const [left] = track.recent.shift() as Usage;
  if (track.above > 0) return;
  const rate = left * STEPS_PER_HOUR;
  track.prior = track.prior === null ? rate : track.prior + (rate - track.prior) / PRIOR_STEPS;
}

export type StepOutcome = "opened" | "closed" | null;

/**
 * Judges the step starting at `stepStart` (its usage already pushed): opens an episode after `openSteps` (or
 * `slowSteps`) steps in a row above (`SENSITIVITY`; it started with the first of them), closes one after 6 steps in
 * a row with the trailing bytes rate below the closing level. `baseline` and `recent` are needed only when the rate
 * can open one or an episode is open.
 */
export function judgeStep(
  track: SpikeTrack,
  stepStart: number,
  baseline: Baseline,
  sensitivity: SpikeSensitivity,
  recent: Recent = NO_RECENT,
): StepOutcome {
  const rate = trailingRate(track);
  const opening = openingLevel(baseline, sensitivity);
  // Both the step itself and the trailing 15 minutes: one burst step keeps the trailing rate up for 3 steps.
  const stepBytes = (track.recent[track.recent.length - 1]?.[0] ?? 0) * STEPS_PER_HOUR;
  // The hour before: the running average of the steps before the trailing window and, while the rise started in
  // this clock hour, the previous clock hour's own rate (a fixed hour that a rise does not pull up as it goes on: a
  // daily job an hour into its run is judged against its first hour, not against its quiet before).
  const held = track.prior ?? 0;
  const lastHour =
    recent.lastHour !== null && (track.aboveSince === null || track.aboveSince >= floorToHour(stepStart))
      ? recent.lastHour
      : null;
  const prior = lastHour === null ? held : Math.max(held, lastHour);
  const quietBefore = lastHour === null ? held : Math.min(held, lastHour);
  const episode = track.episode;
  if (episode) {
    const usage = track.recent[track.recent.length - 1] ?? [0, 0];
    episode.total = [episode.total[0] + usage[0], episode.total[1] + usage[1]];
    episode.peak = [Math.max(episode.peak[0], rate[0]), Math.max(episode.peak[1], rate[1])];
    track.below = rate[0] < closingLevel(baseline, usualLevel(baseline, sensitivity)) ? track.below + 1 : 0;
    if (track.below < CLOSE_STEPS) return null;
    track.episode = null;
    track.below = 0;
    track.above = 0;
    track.aboveSince = null;
    return "closed";
  }
  const { jump, startRatio, quickRatio, openSteps, slowSteps } = SENSITIVITY[sensitivity];
  const bytes = Math.min(rate[0], stepBytes);
  const usual = baseline.rate[0];
  const starting = quietBefore < usual / 2;
  const above =
    bytes > opening && bytes >= prior * jump && (!starting || bytes > usual * startRatio) && !repeats(bytes, recent);
  if (!above) {
    track.above = 0;
    track.aboveSince = null;
    return null;
  }
  track.above += 1;
  track.aboveSince ??= stepStart;
  if (track.above < (bytes >= usual * quickRatio ? openSteps : slowSteps)) return null;
  const total = track.recent.reduce<Usage>((sum, [b, r]) => [sum[0] + b, sum[1] + r], [0, 0]);
  track.episode = { startedAt: track.aboveSince, observed: rate, baseline, peak: rate, total };
  track.below = 0;
  return "opened";
}

/** Whether a step is a repeat of yesterday's surge at this hour (`REPEAT_SURGE`): not above twice its level. */
function repeats(bytes: number, { yesterday, yesterdayUsual }: Recent): boolean {
  if (yesterday === null || yesterdayUsual === null || yesterday <= yesterdayUsual * REPEAT_SURGE) return false;
  return bytes <= yesterday * REPEAT_RATIO;
}

function floorToHour(at: number): number {
  return at - (((at % HOUR) + HOUR) % HOUR);
}

/** Whether a track holds nothing worth keeping: no episode, nothing above, no usage in its window. */
export function isIdle(track: SpikeTrack): boolean {
  return track.episode === null && track.above === 0 && track.recent.every(([b, r]) => b === 0 && r === 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

import { HOUR, MINUTE } from "../../platform/clock";
import type { SpikeSensitivity } from "./contract";

/**
 * The spike detector's pure rules (no storage): a sub-user's trailing rate, bytes and requests, against its own
 * baseline, the same hour of the week ±1 hour over up to 4 past weeks, or its last days while it has less than 2
 * weeks of history (docs/decisions.md, "Spike alerts"). The
 * traffic store runs it once per folded 5-minute bucket; `bench/spike-detection.mjs` runs it on seeded history.
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
 * Per sensitivity: an episode opens when the rate of bytes or of requests passes
 * max(floor, baseline + spreads × robust spread, min(baseline × ratio, baseline + excess)) for `openSteps` steps in
 * a row. The floor is the whole baseline of a sub-user with no history yet; the excess lets a large absolute surge
 * on a busy sub-user count without tripling it (its spread still guards a noisy one).
 */
export const SENSITIVITY: Record<
  SpikeSensitivity,
  { ratio: number; spreads: number; excess: Usage; floor: Usage; openSteps: number }
> = {
  high: { ratio: 2, spreads: 4, excess: [8e9, 80_000], floor: [1e9, 20_000], openSteps: 2 },
  medium: { ratio: 3, spreads: 6, excess: [15e9, 150_000], floor: [2e9, 40_000], openSteps: 2 },
  low: { ratio: 5, spreads: 10, excess: [40e9, 400_000], floor: [10e9, 200_000], openSteps: 3 },
};

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
 * first), and one per past day (1 to 6 days back) for a sub-user with little history.
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

/** The rate per hour an episode opens above, per metric. */
export function openingLevel(baseline: Baseline, sensitivity: SpikeSensitivity): Usage {
  const { ratio, spreads, excess, floor } = SENSITIVITY[sensitivity];
  const rate = baseline.rate;
  const level = (i: 0 | 1) =>
    Math.max(
      floor[i],
      rate[i] + spreads * MAD_SCALE * baseline.spread[i],
      Math.min(rate[i] * ratio, rate[i] + excess[i]),
    );
  return [level(0), level(1)];
}

/**
 * A quarter of the way from the baseline to the opening level: an episode ends once the rate stays below it (a
 * sub-user that settled at a new level stays in one episode until its baseline has learnt the level, rather than
 * opening one on every busy hour).
 */
function closingLevel(baseline: Baseline, opening: Usage): Usage {
  return [
    baseline.rate[0] + (opening[0] - baseline.rate[0]) / 4,
    baseline.rate[1] + (opening[1] - baseline.rate[1]) / 4,
  ];
}

/** The lowest rate that can open an episode at a sensitivity whatever the baseline: steps below it skip the baseline. */
export function canOpen(rate: Usage, sensitivity: SpikeSensitivity): boolean {
  const { floor } = SENSITIVITY[sensitivity];
  return rate[0] > floor[0] || rate[1] > floor[1];
}

/** One sub-user's detector state: its last steps' usage and how long its rate has been above or below. */
export interface SpikeTrack {
  /** Usage of the latest steps, oldest first (at most 3). */
  recent: Usage[];
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
  return { recent: [], above: 0, aboveSince: null, below: 0, episode: null };
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

/** Adds a step's usage to the trailing window (in place). */
export function pushStep(track: SpikeTrack, usage: Usage): void {
  track.recent.push(usage);
  if (track.recent.length > TRAILING_STEPS) track.recent.shift();
}

export type StepOutcome = "opened" | "closed" | null;

/**
 * Judges the step starting at `stepStart` (its usage already pushed): opens an episode after `openSteps` steps in a
 * row whose own rate and trailing rate are both above the opening level (it started with the first of them), closes
 * one after 6 steps in a row with the trailing rate below the closing level. `baseline` is needed only when the rate can open one or an episode is open.
 */
export function judgeStep(
  track: SpikeTrack,
  stepStart: number,
  baseline: Baseline,
  sensitivity: SpikeSensitivity,
): StepOutcome {
  const rate = trailingRate(track);
  const opening = openingLevel(baseline, sensitivity);
  // Both the step itself and the trailing 15 minutes: one burst step keeps the trailing rate up for 3 steps.
  const [stepBytes, stepRequests] = track.recent[track.recent.length - 1] ?? [0, 0];
  const stepRate: Usage = [stepBytes * STEPS_PER_HOUR, stepRequests * STEPS_PER_HOUR];
  const isAbove = (i: 0 | 1) => Math.min(rate[i], stepRate[i]) > opening[i];
  const episode = track.episode;
  if (episode) {
    const usage = track.recent[track.recent.length - 1] ?? [0, 0];
    episode.total = [episode.total[0] + usage[0], episode.total[1] + usage[1]];
    episode.peak = [Math.max(episode.peak[0], rate[0]), Math.max(episode.peak[1], rate[1])];
    const closing = closingLevel(baseline, opening);
    track.below = rate[0] < closing[0] && rate[1] < closing[1] ? track.below + 1 : 0;
    if (track.below < CLOSE_STEPS) return null;
    track.episode = null;
    track.below = 0;
    track.above = 0;
    track.aboveSince = null;
    return "closed";
  }
  if (!isAbove(0) && !isAbove(1)) {
    track.above = 0;
    track.aboveSince = null;
    return null;
  }
  track.above += 1;
  track.aboveSince ??= stepStart;
  if (track.above < SENSITIVITY[sensitivity].openSteps) return null;
  const total = track.recent.reduce<Usage>((sum, [b, r]) => [sum[0] + b, sum[1] + r], [0, 0]);
  track.episode = { startedAt: track.aboveSince, observed: rate, baseline, peak: rate, total };
  track.below = 0;
  return "opened";
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

import {
  baselineHours,
  baselineOf,
  canOpen,
  judgeStep,
  NO_RECENT,
  newTrack,
  pushStep,
  type Recent,
  SENSITIVITY,
  SPIKE_STEP_MS,
  trailingRate,
  type Usage,
} from "../../src/durable-objects/traffic-store/spike-detector";
import { gaussian, poisson, random } from "../scale/fleet";

/**
 * Seeded sub-user histories for the spike detector (the same code the traffic store runs per folded 5-minute
 * bucket): daily and weekly cycles, noise, scheduled jobs, new sub-users and occasional legitimate growth; a month
 * judged after 4 weeks of history, with or without a 250 GB leak. `bench/spike-detection.mjs` runs it.
 */

export { SENSITIVITY };
export const SENSITIVITIES = ["high", "medium", "low"] as const;
type Sensitivity = (typeof SENSITIVITIES)[number];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEP = SPIKE_STEP_MS;
const STEPS_PER_HOUR = HOUR / STEP;
/** The store folds a 5-minute bucket 2 minutes after it ends: that is when its step is judged. */
const FOLD_LATENESS = 2 * MINUTE;
export const HISTORY_DAYS = 28;
export const MONTH_DAYS = 30;
export const LEAK_BYTES = 250e9;
/** A Monday, 00:00 UTC: hours of the week line up with the simulated days. */
const T0 = Date.UTC(2026, 5, 1);

type Kind = "steady" | "scheduled" | "new";

interface Profile {
  /** Bytes per hour at the daily mean. */
  level: number;
  requestSize: number;
  amplitude: number;
  peakHour: number;
  weekend: number;
  noise: number;
  kind: Kind;
  jobHour: number;
  growth: { at: number; factor: number } | null;
}

interface Traffic {
  bytes: Float64Array;
  requests: Float64Array;
}

/**
 * A sub-user's profile: its level (bytes per hour, log-normal around 0.5 GB/h), bytes per request, a daily cycle
 * (amplitude, peak hour), a weekend dip, noise per 5 minutes, and its kind: steady (75%), a scheduled job (2 hours a
 * day, 10%), or new (no history before the month, 15%). One in 10 grows 1.5–3× at some point of the month (over a
 * day).
 */
function profileOf(rand: () => number): Profile {
  const kindDraw = rand();
  return {
    level: 0.5e9 * Math.exp(1.4 * gaussian(rand)),
    requestSize: 100e3 * Math.exp(0.7 * gaussian(rand)),
    amplitude: 0.2 + 0.6 * rand(),
    peakHour: rand() * 24,
    weekend: 0.4 + 0.6 * rand(),
    noise: 0.15 + 0.35 * rand(),
    kind: kindDraw < 0.1 ? "scheduled" : kindDraw < 0.25 ? "new" : "steady",
    jobHour: Math.floor(rand() * 22),
    growth: rand() < 0.1 ? { at: HISTORY_DAYS * DAY + rand() * MONTH_DAYS * DAY, factor: 1.5 + 1.5 * rand() } : null,
  };
}

/** The profile's shape at `t`: the daily cycle (or the job's hours) and the weekend. */
function shapeAt(profile: Profile, t: number, jobJitter: number[]): number {
  const day = Math.floor(t / DAY);
  let shape: number;
  if (profile.kind === "scheduled") {
    const into = (t % DAY) - (profile.jobHour * HOUR + (jobJitter[day] as number));
    shape = into >= 0 && into < 2 * HOUR ? 12 : 0.02;
  } else {
    shape = 1 + profile.amplitude * Math.cos((2 * Math.PI * ((t % DAY) / HOUR - profile.peakHour)) / 24);
  }
  return day % 7 >= 5 ? shape * profile.weekend : shape;
}

/** Bytes and requests per 5-minute step over the history and the month (new sub-users: none before the month). */
function trafficOf(profile: Profile, rand: () => number): Traffic {
  const steps = ((HISTORY_DAYS + MONTH_DAYS) * DAY) / STEP;
  const traffic = { bytes: new Float64Array(steps), requests: new Float64Array(steps) };
  const days = HISTORY_DAYS + MONTH_DAYS;
  const dayFactor = Array.from({ length: days }, () => Math.exp(0.15 * gaussian(rand)));
  const weekFactor = Array.from({ length: Math.ceil(days / 7) }, () => Math.exp(0.1 * gaussian(rand)));
  const jobJitter = Array.from({ length: days }, () => Math.round(gaussian(rand) * 4) * STEP);
  for (let i = 0; i < steps; i++) {
    const t = i * STEP;
    if (profile.kind === "new" && t < HISTORY_DAYS * DAY) continue;
    const day = Math.floor(t / DAY);
    const growth = profile.growth && t > profile.growth.at ? grown(profile.growth, t) : 1;
    const mean =
      (profile.level / STEPS_PER_HOUR) *
      shapeAt(profile, t, jobJitter) *
      (dayFactor[day] as number) *
      (weekFactor[Math.floor(day / 7)] as number) *
      growth;
    const noisy = mean * Math.exp(profile.noise * gaussian(rand) - (profile.noise * profile.noise) / 2);
    const count = poisson(noisy / profile.requestSize, rand);
    traffic.requests[i] = count;
    traffic.bytes[i] = count === 0 ? 0 : count * profile.requestSize * Math.exp(0.2 * gaussian(rand));
  }
  return traffic;
}

function grown(growth: { at: number; factor: number }, t: number): number {
  return 1 + (growth.factor - 1) * Math.min(1, (t - growth.at) / DAY);
}

/**
 * A leak from a leaked credential: 250 GB at a steady rate (drawn so that it takes 2 to 24 hours), reached over 15
 * minutes, from `start`, with bytes per request of its own. Its rate per hour.
 */
function addLeak(traffic: Traffic, rand: () => number, start: number, total = LEAK_BYTES): number {
  const rate = total / (2 * 12 ** rand());
  const size = 50e3 * 10 ** rand();
  let left = total;
  for (let i = Math.floor(start / STEP); i < traffic.bytes.length && left > 0; i++) {
    const ramp = Math.min(1, (i * STEP - start + STEP) / (15 * MINUTE));
    const stepBytes = Math.min(left, (rate / STEPS_PER_HOUR) * ramp);
    traffic.bytes[i] = (traffic.bytes[i] as number) + stepBytes;
    traffic.requests[i] = (traffic.requests[i] as number) + Math.round(stepBytes / size);
    left -= stepBytes;
  }
  return rate;
}

/** Hourly sums (what the store's hour tier holds), by hour from the start of the history. */
function hourlyOf(traffic: Traffic): Traffic {
  const hours = traffic.bytes.length / STEPS_PER_HOUR;
  const hourly = { bytes: new Float64Array(hours), requests: new Float64Array(hours) };
  for (let i = 0; i < traffic.bytes.length; i++) {
    const h = Math.floor(i / STEPS_PER_HOUR);
    hourly.bytes[h] = (hourly.bytes[h] as number) + (traffic.bytes[i] as number);
    hourly.requests[h] = (hourly.requests[h] as number) + (traffic.requests[i] as number);
  }
  return hourly;
}

interface Episode {
  /** When the store judges it open (ms from the start of the history). */
  judgedAt: number;
  closedAt: number | null;
}

/** The detector over the month, as the store runs it: its episodes. */
function detect(traffic: Traffic, hourly: Traffic, sensitivity: Sensitivity): Episode[] {
  const track = newTrack();
  const baselines = new Map<number, ReturnType<typeof baselineOf>>();
  const baselineAt = (hourIndex: number) => {
    let baseline = baselines.get(hourIndex);
    if (!baseline) {
      const { weeks, days } = baselineHours(T0 + hourIndex * HOUR);
      const usage = (windows: number[][]) =>
        windows.map((hours) =>
          hours.map((h): Usage => {
            const index = (h - T0) / HOUR;
            return index < 0 ? [0, 0] : [hourly.bytes[index] as number, hourly.requests[index] as number];
          }),
        );
      baseline = baselineOf(usage(weeks), usage(days));
      baselines.set(hourIndex, baseline);
    }
    return baseline;
  };
  /** As the store reads them from its hour tier (`SpikeWatch`): the previous hour, yesterday's window and baseline. */
  const recentAt = (hourIndex: number): Recent => {
    const at = (h: number) => (h < 0 ? null : (hourly.bytes[h] as number));
    const window = [at(hourIndex - 25), at(hourIndex - 24), at(hourIndex - 23)].filter((b) => b !== null);
    return {
      lastHour: at(hourIndex - 1),
      yesterday: window.length === 0 ? null : Math.max(...window),
      yesterdayUsual: hourIndex < 24 ? null : baselineAt(hourIndex - 24).rate[0],
    };
  };
  const none = baselineOf([]);
  const episodes: Episode[] = [];
  const first = (HISTORY_DAYS * DAY) / STEP - 3;
  for (let i = first; i < traffic.bytes.length; i++) {
    pushStep(track, [traffic.bytes[i] as number, traffic.requests[i] as number]);
    if (i < first + 3) continue;
    const needed = track.episode !== null || canOpen(trailingRate(track), sensitivity);
    const hourIndex = Math.floor(i / STEPS_PER_HOUR);
    const outcome = needed
      ? judgeStep(track, T0 + i * STEP, baselineAt(hourIndex), sensitivity, recentAt(hourIndex))
      : judgeStep(track, T0 + i * STEP, none, sensitivity, NO_RECENT);
    const judgedAt = (i + 1) * STEP + FOLD_LATENESS;
    if (outcome === "opened") episodes.push({ judgedAt, closedAt: null });
    const last = episodes[episodes.length - 1];
    if (outcome === "closed" && last) last.closedAt = judgedAt;
  }
  return episodes;
}

/** After an account's notification, episodes starting within this window are announced together at its end. */
export const DIGEST_WINDOW_MS = HOUR;

/**
 * The account's notifications for episodes opened at `times` (sorted), as the API sends them: the first after a
 * quiet window at once, later ones together at the window's end. Their number, and when each episode was announced.
 */
export function notify(times: number[]): { count: number; announcedAt: number[] } {
  let last = Number.NEGATIVE_INFINITY;
  let waiting: number | null = null;
  let count = 0;
  const announcedAt = times.map((t) => {
    if (waiting !== null && waiting <= t) {
      last = waiting;
      waiting = null;
    }
    if (waiting !== null) return waiting;
    count++;
    if (t >= last + DIGEST_WINDOW_MS) {
      last = t;
      return t;
    }
    waiting = last + DIGEST_WINDOW_MS;
    return waiting;
  });
  return { count, announcedAt };
}

/**
 * `subusers` seeded sub-user-months of normal traffic at medium: each one's episodes (all false alarms), by kind.
 * Accounts are made of consecutive sub-users.
 */
export function normalMonth(subusers: number, seed: number) {
  const rand = random(seed);
  const kinds: Record<string, number> = {};
  const alarmsByKind: Record<string, number> = {};
  const episodes: number[][] = [];
  for (let n = 0; n < subusers; n++) {
    const profile = profileOf(rand);
    const kind = profile.growth ? `${profile.kind}+growth` : profile.kind;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    const traffic = trafficOf(profile, rand);
    const opened = detect(traffic, hourlyOf(traffic), "medium").map((e) => e.judgedAt);
    if (opened.length > 0) alarmsByKind[kind] = (alarmsByKind[kind] ?? 0) + opened.length;
    episodes.push(opened);
  }
  return { kinds, alarmsByKind, episodes };
}

/** Notifications per account-month for accounts of `size` sub-users cut from the population (whole accounts only). */
export function notificationsPerAccount(
  episodes: number[][],
  size: number,
): { accounts: number; mean: number; max: number } {
  const accounts = Math.floor(episodes.length / size);
  const counts = Array.from({ length: accounts }, (_, a) => {
    const times = episodes
      .slice(a * size, (a + 1) * size)
      .flat()
      .sort((x, y) => x - y);
    return notify(times).count;
  });
  return { accounts, mean: counts.reduce((s, c) => s + c, 0) / accounts, max: Math.max(...counts) };
}

/**
 * A leak of `bytes` into each of `subusers` sub-users' month (at a random time), at medium: minutes from its start
 * until an episode opens (0 when one was already open; null when none opens while it lasts), and until the account
 * is notified, the sub-user being one of `accountSize` whose other episodes are `neighbours` (a normal account).
 */
export function leakDelays(subusers: number, seed: number, bytes: number, neighbours: number[][][]) {
  const rand = random(seed);
  const results: Array<{ minutes: number | null; notifiedMinutes: number | null; leakToUsual: number }> = [];
  for (let n = 0; n < subusers; n++) {
    const profile = profileOf(rand);
    const traffic = trafficOf(profile, rand);
    const start = Math.floor((HISTORY_DAYS * DAY + (1 + rand() * (MONTH_DAYS - 3)) * DAY) / MINUTE) * MINUTE;
    const rate = addLeak(traffic, rand, start, bytes);
    const leakEnd = start + (bytes / rate) * HOUR + HOUR;
    const usual = profile.level * (profile.kind === "scheduled" ? 12 : 1 + profile.amplitude);
    const episodes = detect(traffic, hourlyOf(traffic), "medium");
    const open = episodes.find((e) => e.judgedAt < start && (e.closedAt === null || e.closedAt > start));
    const found = open ?? episodes.find((e) => e.judgedAt >= start && e.judgedAt <= leakEnd);
    let minutes: number | null = null;
    let notifiedMinutes: number | null = null;
    if (found) {
      minutes = open ? 0 : (found.judgedAt - start) / MINUTE;
      const others = (neighbours[n % neighbours.length] ?? []).flat();
      const times = [...others, found.judgedAt].sort((a, b) => a - b);
      const announced = notify(times).announcedAt[times.indexOf(found.judgedAt)] as number;
      notifiedMinutes = Math.max(0, (announced - start) / MINUTE);
    }
    results.push({ minutes, notifiedMinutes, leakToUsual: rate / usual });
  }
  return results;
}

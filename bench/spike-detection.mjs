// `npm run bench:spikes`: the spike detector (src/durable-objects/traffic-store/spike-detector.ts, the same code the
// traffic store runs per folded 5-minute bucket) on seeded sub-user histories with daily and weekly cycles, noise,
// scheduled jobs, new sub-users and occasional legitimate growth. It reports false alarms per sub-user-month on
// normal traffic, and how soon a 250 GB leak-shaped episode is detected, at each sensitivity; results go to
// bench/results/spike-detection-<time>.json. Exits 1 when a goal (checked at the default sensitivity, medium) is
// missed. `--subusers N` (default 1,200) sets the population of each run; `--seed S` its seed.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");
const arg = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const SUBUSERS = arg("--subusers", 1200);
const SEED = arg("--seed", 20261127);

const out = path.join(tmpdir(), `spike-detector-${process.pid}.mjs`);
await build({
  entryPoints: [path.join(root, "src/durable-objects/traffic-store/spike-detector.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node22",
  outfile: out,
  logLevel: "error",
});
const detector = await import(pathToFileURL(out).href);
rmSync(out, { force: true });

const GOALS = { falseAlarmsPerSubuserMonth: 1, leakDetectedWithinMinutes: 60, leakDetectedShare: 0.99 };
const SENSITIVITIES = ["high", "medium", "low"];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const STEP = detector.SPIKE_STEP_MS;
const STEPS_PER_HOUR = HOUR / STEP;
/** The store folds a 5-minute bucket 2 minutes after it ends: that is when its step is judged. */
const FOLD_LATENESS = 2 * MINUTE;
const HISTORY_DAYS = 28;
const MONTH_DAYS = 30;
const LEAK_BYTES = 250e9;
/** A Monday, 00:00 UTC: hours of the week line up with the simulated days. */
const T0 = Date.UTC(2026, 5, 1);

/* ── Seeded randomness ─────────────────────────────────────────────────────────────────────────────────────── */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function normal(rand) {
  return Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
}
function poisson(rand, mean) {
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal(rand)));
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = rand(); p > limit; p *= rand()) k++;
  return k;
}

/* ── A sub-user's traffic ──────────────────────────────────────────────────────────────────────────────────── */
/**
 * A sub-user's profile: its level (bytes per hour, log-normal around 0.5 GB/h), bytes per request, a daily cycle
 * (amplitude, peak hour), a weekend dip, noise per 5 minutes, and its kind: steady, a scheduled job (2 hours a
 * day), or new (no history before the month). 10% grow 1.5–3× at some point of the month (over a day).
 */
function profileOf(rand) {
  const kindDraw = rand();
  return {
    level: 0.5e9 * Math.exp(1.4 * normal(rand)),
    requestSize: 100e3 * Math.exp(0.7 * normal(rand)),
    amplitude: 0.2 + 0.6 * rand(),
    peakHour: rand() * 24,
    weekend: 0.4 + 0.6 * rand(),
    noise: 0.15 + 0.35 * rand(),
    kind: kindDraw < 0.1 ? "scheduled" : kindDraw < 0.25 ? "new" : "steady",
    jobHour: Math.floor(rand() * 22),
    growth: rand() < 0.1 ? { at: HISTORY_DAYS * DAY + rand() * MONTH_DAYS * DAY, factor: 1.5 + 1.5 * rand() } : null,
  };
}

/** Bytes and requests per 5-minute step over the history and the month (new sub-users: none before the month). */
function trafficOf(profile, rand) {
  const steps = ((HISTORY_DAYS + MONTH_DAYS) * DAY) / STEP;
  const bytes = new Float64Array(steps);
  const requests = new Float64Array(steps);
  const days = HISTORY_DAYS + MONTH_DAYS;
  const dayFactor = Array.from({ length: days }, () => Math.exp(0.15 * normal(rand)));
  const weekFactor = Array.from({ length: Math.ceil(days / 7) }, () => Math.exp(0.1 * normal(rand)));
  const jobJitter = Array.from({ length: days }, () => Math.round(normal(rand) * 4) * STEP);
  for (let i = 0; i < steps; i++) {
    const t = i * STEP;
    if (profile.kind === "new" && t < HISTORY_DAYS * DAY) continue;
    const day = Math.floor(t / DAY);
    const hourOfDay = (t % DAY) / HOUR;
    const weekday = day % 7;
    let shape;
    if (profile.kind === "scheduled") {
      const start = profile.jobHour * HOUR + jobJitter[day];
      const into = (t % DAY) - start;
      shape = into >= 0 && into < 2 * HOUR ? 12 : 0.02;
    } else {
      shape = 1 + profile.amplitude * Math.cos((2 * Math.PI * (hourOfDay - profile.peakHour)) / 24);
    }
    if (weekday >= 5) shape *= profile.weekend;
    let growth = 1;
    if (profile.growth && t > profile.growth.at) {
      growth = 1 + (profile.growth.factor - 1) * Math.min(1, (t - profile.growth.at) / DAY);
    }
    const mean = (profile.level / STEPS_PER_HOUR) * shape * dayFactor[day] * weekFactor[Math.floor(day / 7)] * growth;
    const noisy = mean * Math.exp(profile.noise * normal(rand) - (profile.noise * profile.noise) / 2);
    const count = poisson(rand, noisy / profile.requestSize);
    requests[i] = count;
    bytes[i] = count === 0 ? 0 : count * profile.requestSize * Math.exp(0.2 * normal(rand));
  }
  return { bytes, requests };
}

/**
 * A leak from a leaked credential: 250 GB at a steady rate (drawn so that it takes 2 to 24 hours), reached over
 * 15 minutes, from `start`; bytes per request of its own.
 */
function addLeak(traffic, rand, start) {
  const hours = 2 * 12 ** rand();
  const rate = LEAK_BYTES / hours;
  const size = 50e3 * 10 ** rand();
  let left = LEAK_BYTES;
  for (let i = Math.floor(start / STEP); i < traffic.bytes.length && left > 0; i++) {
    const into = i * STEP - start;
    const ramp = Math.min(1, (into + STEP) / (15 * MINUTE));
    const stepBytes = Math.min(left, (rate / STEPS_PER_HOUR) * ramp);
    traffic.bytes[i] += stepBytes;
    traffic.requests[i] += Math.round(stepBytes / size);
    left -= stepBytes;
  }
  return { ratePerHour: rate, hours };
}

/* ── The detector over a series, as the store runs it ──────────────────────────────────────────────────────── */
/** Hourly sums (the hour tier), indexed by hour from the start of the history. */
function hourlyOf(traffic) {
  const hours = traffic.bytes.length / STEPS_PER_HOUR;
  const bytes = new Float64Array(hours);
  const requests = new Float64Array(hours);
  for (let i = 0; i < traffic.bytes.length; i++) {
    bytes[Math.floor(i / STEPS_PER_HOUR)] += traffic.bytes[i];
    requests[Math.floor(i / STEPS_PER_HOUR)] += traffic.requests[i];
  }
  return { bytes, requests };
}

/** Runs the detector over the month: its episodes, when each was judged open and closed (ms from T0). */
function detect(traffic, hourly, sensitivity) {
  const track = detector.newTrack();
  const baselines = new Map();
  const baselineAt = (hourIndex) => {
    let baseline = baselines.get(hourIndex);
    if (!baseline) {
      const weeks = detector.baselineHours(T0 + hourIndex * HOUR).map((hours) =>
        hours.map((h) => {
          const index = (h - T0) / HOUR;
          return index < 0 ? [0, 0] : [hourly.bytes[index], hourly.requests[index]];
        }),
      );
      baseline = detector.baselineOf(weeks);
      baselines.set(hourIndex, baseline);
    }
    return baseline;
  };
  const none = { rate: [0, 0], spread: [0, 0], weeks: 0 };
  const opened = [];
  const first = (HISTORY_DAYS * DAY) / STEP - 3;
  for (let i = first; i < traffic.bytes.length; i++) {
    detector.pushStep(track, [traffic.bytes[i], traffic.requests[i]]);
    if (i < first + 3) continue;
    const needed = track.episode !== null || detector.canOpen(detector.trailingRate(track), sensitivity);
    const baseline = needed ? baselineAt(Math.floor(i / STEPS_PER_HOUR)) : none;
    const outcome = detector.judgeStep(track, T0 + i * STEP, baseline, sensitivity);
    const judgedAt = (i + 1) * STEP + FOLD_LATENESS;
    if (outcome === "opened") opened.push({ judgedAt, closedAt: null });
    if (outcome === "closed") (opened.at(-1) ?? {}).closedAt = judgedAt;
  }
  return opened;
}

/* ── Runs ──────────────────────────────────────────────────────────────────────────────────────────────────── */
function falseAlarmRun(seed) {
  const rand = mulberry32(seed);
  const perSensitivity = Object.fromEntries(
    SENSITIVITIES.map((s) => [s, { alarms: 0, subusersAlarmed: 0, byKind: {} }]),
  );
  const kinds = {};
  for (let n = 0; n < SUBUSERS; n++) {
    const profile = profileOf(rand);
    kinds[profile.kind] = (kinds[profile.kind] ?? 0) + 1;
    const traffic = trafficOf(profile, rand);
    const hourly = hourlyOf(traffic);
    for (const sensitivity of SENSITIVITIES) {
      const alarms = detect(traffic, hourly, sensitivity).length;
      const figures = perSensitivity[sensitivity];
      figures.alarms += alarms;
      if (alarms > 0) figures.subusersAlarmed++;
      const kind = profile.growth ? `${profile.kind}+growth` : profile.kind;
      figures.byKind[kind] = (figures.byKind[kind] ?? 0) + alarms;
    }
  }
  const months = SUBUSERS; // one 30-day month each
  return {
    subuserMonths: months,
    kinds,
    perSensitivity: Object.fromEntries(
      Object.entries(perSensitivity).map(([s, f]) => [
        s,
        { ...f, alarmsPerSubuserMonth: f.alarms / months, subusersAlarmedShare: f.subusersAlarmed / months },
      ]),
    ),
  };
}

function leakRun(seed) {
  const rand = mulberry32(seed);
  const delays = Object.fromEntries(SENSITIVITIES.map((s) => [s, []]));
  const leaks = [];
  for (let n = 0; n < SUBUSERS; n++) {
    const profile = profileOf(rand);
    const traffic = trafficOf(profile, rand);
    const start = HISTORY_DAYS * DAY + (1 + rand() * (MONTH_DAYS - 3)) * DAY;
    const leak = addLeak(traffic, rand, Math.floor(start / MINUTE) * MINUTE);
    const hourly = hourlyOf(traffic);
    const usual = profile.level * (profile.kind === "scheduled" ? 12 : 1 + profile.amplitude);
    leaks.push({ ratio: leak.ratePerHour / usual });
    for (const sensitivity of SENSITIVITIES) {
      const opened = detect(traffic, hourly, sensitivity);
      // An episode already open when the leak starts has alerted: its delay counts as none.
      const found = opened.find((o) => o.judgedAt >= start) ?? null;
      const alreadyOpen = opened.some((o) => o.judgedAt < start && (o.closedAt === null || o.closedAt > start));
      delays[sensitivity].push(alreadyOpen ? 0 : found ? (found.judgedAt - start) / MINUTE : Number.POSITIVE_INFINITY);
    }
  }
  return Object.fromEntries(
    SENSITIVITIES.map((s) => {
      const sorted = [...delays[s]].sort((a, b) => a - b);
      const within = sorted.filter((d) => d <= GOALS.leakDetectedWithinMinutes).length;
      const missed = delays[s]
        .map((d, i) => ({ d, ratio: leaks[i].ratio }))
        .filter(({ d }) => d > GOALS.leakDetectedWithinMinutes)
        .map(({ d, ratio }) => ({ delayMinutes: Number.isFinite(d) ? d : null, leakToUsualRatio: round(ratio, 2) }));
      return [
        s,
        {
          leaks: sorted.length,
          detectedWithinGoalShare: within / sorted.length,
          p50Minutes: quantile(sorted, 0.5),
          p95Minutes: quantile(sorted, 0.95),
          p99Minutes: quantile(sorted, 0.99),
          maxMinutes: sorted.at(-1),
          missedGoal: missed.slice(0, 20),
        },
      ];
    }),
  );
}

function quantile(sorted, q) {
  const value = sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return Number.isFinite(value) ? value : null;
}
function round(x, digits) {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

const started = Date.now();
const normalTraffic = falseAlarmRun(SEED);
const leaks = leakRun(SEED + 1);
const elapsedS = (Date.now() - started) / 1000;

console.log(
  `spike detection: ${SUBUSERS} seeded sub-users × ${MONTH_DAYS}-day month after ${HISTORY_DAYS} days of history ` +
    `(${Object.entries(normalTraffic.kinds)
      .map(([k, n]) => `${n} ${k}`)
      .join(", ")}), seed ${SEED}, ${elapsedS.toFixed(1)} s`,
);
console.log("");
console.log("sensitivity | false alarms / sub-user-month | sub-users alarmed | leak ≤ 60 min | p50 | p95 | max (min)");
console.log("------------|-------------------------------|-------------------|---------------|-----|-----|----------");
for (const s of SENSITIVITIES) {
  const fa = normalTraffic.perSensitivity[s];
  const lk = leaks[s];
  console.log(
    `${s.padEnd(11)} | ${fa.alarmsPerSubuserMonth.toFixed(3).padStart(29)} | ${`${(fa.subusersAlarmedShare * 100).toFixed(1)}%`.padStart(17)} | ` +
      `${`${(lk.detectedWithinGoalShare * 100).toFixed(1)}%`.padStart(13)} | ${String(lk.p50Minutes).padStart(3)} | ` +
      `${String(lk.p95Minutes).padStart(3)} | ${String(lk.maxMinutes === Number.POSITIVE_INFINITY ? "missed" : lk.maxMinutes).padStart(8)}`,
  );
}
const medium = { falseAlarms: normalTraffic.perSensitivity.medium, leaks: leaks.medium };
const missed = [];
if (medium.falseAlarms.alarmsPerSubuserMonth > GOALS.falseAlarmsPerSubuserMonth)
  missed.push("false alarms per sub-user-month");
if (medium.leaks.detectedWithinGoalShare < GOALS.leakDetectedShare) missed.push("leaks detected within 60 minutes");
if (normalTraffic.subuserMonths < 1000) missed.push("at least 1,000 sub-user-months");
console.log("");
console.log(
  `goals (medium): ≤ ${GOALS.falseAlarmsPerSubuserMonth} false alarm per sub-user-month over ≥ 1,000 sub-user-months; ` +
    `a 250 GB leak detected ≤ ${GOALS.leakDetectedWithinMinutes} min after its start in ≥ ${GOALS.leakDetectedShare * 100}% ` +
    `of leaks — ${missed.length === 0 ? "met" : `MISSED: ${missed.join(", ")}`}`,
);

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const dir = path.join(root, "bench/results");
mkdirSync(dir, { recursive: true });
const file = `bench/results/spike-detection-${stamp}.json`;
writeFileSync(
  path.join(root, file),
  `${JSON.stringify(
    {
      seed: SEED,
      subusers: SUBUSERS,
      historyDays: HISTORY_DAYS,
      monthDays: MONTH_DAYS,
      leakBytes: LEAK_BYTES,
      goals: GOALS,
      sensitivity: detector.SENSITIVITY,
      normalTraffic,
      leaks: Object.fromEntries(
        Object.entries(leaks).map(([s, l]) => [
          s,
          { ...l, maxMinutes: l.maxMinutes === Number.POSITIVE_INFINITY ? null : l.maxMinutes },
        ]),
      ),
      goalsMet: missed.length === 0,
      elapsedS,
    },
    null,
    2,
  )}\n`,
);
console.log(`results: ${file}`);
process.exit(missed.length === 0 ? 0 : 1);

// `npm run bench:spikes`: the spike detector (src/durable-objects/traffic-store/spike-detector.ts, the code the traffic
// store runs per folded 5-minute bucket) on seeded sub-user histories with daily and weekly cycles, noise, scheduled
// jobs, new sub-users and occasional legitimate growth (bench/spikes/simulate.ts). It reports false alarms per
// sub-user-month on normal traffic and how soon a 250 GB leak-shaped episode is detected, at each sensitivity;
// results go to bench/results/spike-detection-<time>.json. Exits 1 when a goal (checked at the default sensitivity,
// medium) is missed. `--subusers N` (default 1,200) sets each run's population, `--seed S` its seed.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { importBundled } from "./bundle.mjs";

const root = path.join(import.meta.dirname, "..");
const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const subusers = option("--subusers", 1200);
const seed = option("--seed", 20261127);
const GOALS = { falseAlarmsPerSubuserMonth: 1, leakMinutes: 60, leakDetectedShare: 0.99, subuserMonths: 1000 };

const sim = await importBundled(root, "bench/spikes/simulate.ts");
const started = Date.now();
const normal = sim.falseAlarms(subusers, seed);
const leaks = summarizeLeaks(sim.leakDelays(subusers, seed + 1));
const elapsedS = (Date.now() - started) / 1000;

/** Per sensitivity: the share of leaks detected within the goal, delay quantiles, and the leaks that missed it. */
function summarizeLeaks(bySensitivity) {
  return Object.fromEntries(
    Object.entries(bySensitivity).map(([sensitivity, leaks]) => {
      const delays = leaks.map((l) => l.minutes ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
      const at = (q) => finite(delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]);
      const missed = leaks.filter((l) => l.minutes === null || l.minutes > GOALS.leakMinutes);
      return [
        sensitivity,
        {
          leaks: leaks.length,
          detectedWithinGoalShare: (leaks.length - missed.length) / leaks.length,
          p50Minutes: at(0.5),
          p95Minutes: at(0.95),
          p99Minutes: at(0.99),
          maxMinutes: at(1),
          missedGoal: missed.map((l) => ({ minutes: l.minutes, leakToUsual: Math.round(l.leakToUsual * 100) / 100 })),
        },
      ];
    }),
  );
}

function finite(value) {
  return Number.isFinite(value) ? value : null;
}

const kinds = Object.entries(normal.kinds)
  .map(([kind, n]) => `${n} ${kind}`)
  .join(", ");
console.log(
  `spike detection: ${subusers} seeded sub-user-months (${kinds}) after ${sim.HISTORY_DAYS} days of history, ` +
    `a 250 GB leak into each of ${subusers} more; seed ${seed}; ${elapsedS.toFixed(1)} s`,
);
console.log("");
console.log(
  "| sensitivity | false alarms / sub-user-month | sub-users alarmed | leaks ≤ 60 min | p50 | p95 | max (min) |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|");
for (const sensitivity of sim.SENSITIVITIES) {
  const fa = normal.perSensitivity[sensitivity];
  const leak = leaks[sensitivity];
  console.log(
    `| ${sensitivity} | ${fa.alarmsPerSubuserMonth.toFixed(3)} | ${(fa.subusersAlarmedShare * 100).toFixed(1)}% | ` +
      `${(leak.detectedWithinGoalShare * 100).toFixed(1)}% | ${leak.p50Minutes} | ${leak.p95Minutes} | ` +
      `${leak.maxMinutes ?? "not detected"} |`,
  );
}
const medium = { falseAlarms: normal.perSensitivity.medium, leaks: leaks.medium };
const missed = [
  medium.falseAlarms.alarmsPerSubuserMonth > GOALS.falseAlarmsPerSubuserMonth
    ? "false alarms per sub-user-month"
    : null,
  medium.leaks.detectedWithinGoalShare < GOALS.leakDetectedShare ? "leaks detected within 60 minutes" : null,
  normal.subuserMonths < GOALS.subuserMonths ? "at least 1,000 sub-user-months" : null,
].filter((goal) => goal !== null);
console.log("");
console.log(
  `goals (medium): ≤ ${GOALS.falseAlarmsPerSubuserMonth} false alarm per sub-user-month over ≥ 1,000 ` +
    `sub-user-months; a 250 GB leak detected ≤ ${GOALS.leakMinutes} min after it starts in ≥ ` +
    `${GOALS.leakDetectedShare * 100}% of leaks — ${missed.length === 0 ? "met" : `MISSED: ${missed.join(", ")}`}`,
);

const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const file = `bench/results/spike-detection-${stamp}.json`;
mkdirSync(path.join(root, "bench/results"), { recursive: true });
writeFileSync(
  path.join(root, file),
  `${JSON.stringify(
    {
      seed,
      subusers,
      goals: GOALS,
      sensitivity: sim.SENSITIVITY,
      normal,
      leaks,
      goalsMet: missed.length === 0,
      elapsedS,
    },
    null,
    2,
  )}\n`,
);
console.log(`results: ${file}`);
process.exit(missed.length === 0 ? 0 : 1);

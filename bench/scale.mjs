// `npm run bench:scale`: the fleet simulation (bench/scale/simulate.ts). It runs the real route, packing and store
// code over simulated time for three account mixes at 1 M and 10 M gateway requests per minute, and prints each
// part's load beside its published limit and the cost per billion gateway requests, by line. Results:
// bench/results/scale-<time>.json and scale-latest.md. `--short` (CI): one small run of each scenario at 1 M
// requests/min, nothing written; `--quick`: the same sampling at both rates, results written. Every run exits
// non-zero when a goal is missed (bench/scale/goals.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { importBundled } from "./bundle.mjs";

const root = path.join(import.meta.dirname, "..");
const short = process.argv.includes("--short");
/** `--quick`: both rates and every mix, with the short run's sampling (3 ranks, 40 minutes a store); results kept. */
const quick = process.argv.includes("--quick");
/**
 * `--access-path`: only the access path (its bill per mix and the busy sub-user on the real gate), in seconds; kept
 * in bench/results/access-path-<time>.json.
 */
const accessPathOnly = process.argv.includes("--access-path");
const sim = await importBundled(root, "bench/scale/index.ts", {
  banner: {
    js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
  },
  // The store code runs here without a Durable Object runtime; only the classes' base is needed to load.
  alias: { "cloudflare:workers": path.join(root, "bench/scale/workers-stub.ts") },
});

const options = { ...(short || quick ? sim.SHORT : sim.FULL), root };
const rates = short ? [1_000_000] : [1_000_000, 10_000_000];
const results = [];
const started = Date.now();
const d1 = accessPathOnly ? null : sim.measureD1(root, 10_000, 50, options.d1Samples);
if (d1) {
  console.log("D1 model: the migrations on node:sqlite, 10,000 accounts with their pools and capped sub-users");
  console.log(
    `  a settlement of pools alone ${d1.settlementMs(0).toFixed(3)} ms (${d1.settlementRows(0).toFixed(1)} rows), ` +
      `with 50 capped months ${d1.settlementMs(50).toFixed(3)} ms (${d1.settlementRows(50).toFixed(1)} rows)`,
  );
}
for (const requestsPerMinute of accessPathOnly ? [] : rates) {
  for (const mix of sim.MIXES) {
    for (const recordsPerPost of sim.BATCH_SIZES) {
      console.log(
        `\n${mix.name}, ${format(requestsPerMinute)} requests/min, ${format(recordsPerPost)} records per POST`,
      );
      const scenario = { mix, requestsPerMinute, recordsPerPost };
      const result = await sim.simulateScenario(scenario, options, d1, (line) => console.log(line));
      results.push(result);
      printScenario(result);
    }
  }
}
const accessPath = [];
console.log("\nThe access path (deciding at the node), every request a new connection:");
/** Dollars to the cent; a share that float rounding left a hair under zero prints as $0.00, not $-0.00. */
const dollars = (usd) => `$${(Math.abs(usd) < 0.005 ? 0 : usd).toFixed(2)}`;

for (const requestsPerMinute of rates) {
  for (const mix of sim.MIXES) {
    const path = await sim.accessPathCost(mix, requestsPerMinute, sim.ACCOUNTS);
    accessPath.push({ scenario: mix.name, requestsPerMinute, ...path });
    const total = path.cost.reduce((sum, line) => sum + line.usdPerBillion, 0);
    const sessions = path.cost.reduce((sum, line) => sum + line.sessionsUsdPerBillion, 0);
    console.log(
      `  ${mix.name}, ${format(requestsPerMinute)} requests/min, ${path.nodes} nodes, ${path.slots} slots: ` +
        `$${total.toFixed(2)} per billion, of which sticky sessions ${dollars(sessions)}; ` +
        `gate calls ${format(Math.round(path.perSecond.gateCalls))}/s, ` +
        `session-index calls ${format(Math.round(path.perSecond.indexCalls))}/s, ` +
        `push fan-out ${path.fanOutPerChange} messages per change; target rules at the bound (every sub-user, ` +
        `edited daily) $${path.targetRulesBoundUsdPerBillion.toFixed(2)}`,
    );
    for (const line of path.cost) {
      console.log(
        `    ${line.line.padEnd(29)} $${line.usdPerBillion.toFixed(2)} (sticky sessions ${dollars(line.sessionsUsdPerBillion)})`,
      );
    }
  }
}
const bills = results.length > 0 ? sim.wholeBills(results, accessPath) : [];
if (bills.length > 0) {
  console.log("\nThe whole bill per billion gateway requests (metering + the access path):");
  for (const bill of bills) {
    console.log(
      `  ${bill.scenario.padEnd(12)} ${format(bill.requestsPerMinute).padStart(10)}/min ` +
        `${format(bill.recordsPerPost).padStart(5)} per POST: $${bill.totalUsd.toFixed(2)} ` +
        `(metering $${bill.meteringUsd.toFixed(2)}, access path $${bill.accessPathUsd.toFixed(2)}, ` +
        `of which sticky sessions ${dollars(bill.sessionsUsd)})`,
    );
  }
}
const hot = await sim.simulateHotSubuser({
  connectionsPerSecond: 10_000,
  nodes: 50,
  seconds: short || quick ? 10 : 60,
  holdMs: 2_000,
  limits: { concurrent: 30_000, rps: 15_000 },
});
console.log(
  `\nOne sub-user at ${format(hot.connectionsPerSecond)} new connections/s across ${hot.nodes} nodes for ${hot.seconds} s ` +
    `(the real gate): ${hot.gateCallsPerSecond.toFixed(0)} gate calls/s (${(100 * hot.gateShareOfBudget).toFixed(1)}% of ` +
    `an object's ~1,000/s; goal ≤ 50%), over-admitted ${hot.overAdmitted} (goal 0), refused while capacity sat idle ` +
    `elsewhere ${((100 * hot.refusedWhileIdle) / hot.warmRequests).toFixed(2)}% of ${format(hot.warmRequests)} after the ` +
    `first second (goal ≤ 1%); ${((100 * hot.refused) / hot.requests).toFixed(2)}% refused in all, the cold start included`,
);
console.log(`\nsimulated in ${Math.round((Date.now() - started) / 1000)} s`);

if (accessPathOnly) {
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = `bench/results/access-path-${stamp}.json`;
  writeFileSync(path.join(root, file), `${JSON.stringify({ accessPath, hotSubuser: hot }, null, 2)}\n`);
  console.log(`results: ${file}`);
} else if (short) {
  for (const result of results) {
    const total = result.cost.reduce((sum, line) => sum + line.usdPerBillion, 0);
    if (!(total > 0) || result.parts.some((part) => !Number.isFinite(part.load))) {
      throw new Error(`${result.scenario}: the simulation produced no sane figures`);
    }
  }
} else {
  const dir = path.join(root, "bench/results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  writeFileSync(
    path.join(dir, `scale-${stamp}.json`),
    `${JSON.stringify({ options, results, accessPath, bills, hotSubuser: hot }, null, 2)}\n`,
  );
  writeFileSync(path.join(dir, "scale-latest.md"), markdown(results, bills));
  console.log(`results: bench/results/scale-${stamp}.json, bench/results/scale-latest.md`);
}
const missed = accessPathOnly ? [] : sim.missedGoals(results, bills, hot);
if (missed.length > 0) {
  console.log(`\nbench:scale: ${missed.length} goal(s) missed:`);
  for (const line of missed) console.log(`  ${line}`);
  process.exitCode = 1;
} else if (!accessPathOnly) {
  console.log(
    "\nbench:scale: every goal met, the blocked ones held to their ceilings (BLOCKED in bench/scale/goals.ts).",
  );
}

function printScenario(result) {
  for (const part of result.parts) {
    const share = (100 * part.load) / part.limit;
    console.log(
      `  ${part.part.padEnd(28)} ${human(part.load, part.unit).padStart(12)} of ${human(part.limit, part.unit).padStart(10)}  ${share.toFixed(1).padStart(6)}%`,
    );
  }
  const total = result.cost.reduce((sum, line) => sum + line.usdPerBillion, 0);
  console.log(`  cost per billion requests: $${total.toFixed(2)}`);
  for (const line of result.cost) console.log(`    ${line.line.padEnd(20)} $${line.usdPerBillion.toFixed(2)}`);
  console.log(`  ${featuresLine(result)}`);
  console.log(`  ${refusalLine(result)}`);
}

/** Spike detection's share of the lines and an idle account's live tail, against their goal. */
function featuresLine(result) {
  const { detectionUsdPerBillion: detection, idleTailUsdPerBillion: tail } = result.features;
  return `of which spike detection $${detection.toFixed(3)}, and an idle account's live tail at most $${tail.toFixed(3)}: $${(detection + tail).toFixed(3)} together (goal ≤ $2)`;
}

/** The largest overrun of an exhausted pool or cap: seconds of traffic before the gates refuse, and bytes past. */
function refusalLine(result) {
  const { seconds, bytesPast, kind, rank } = result.refusal;
  return `pool or cap run out: refused ${seconds.toFixed(1)} s after it (at most, ${kind} of rank ${rank}), ${human(bytesPast, "B")} past the limit at most (goal ≤ 60 s)`;
}

function markdown(all, bills) {
  const lines = [
    `# Fleet simulation ${new Date().toISOString()}`,
    "",
    "`npm run bench:scale` (bench/scale/simulate.ts): 10,000 accounts × 1,000 sub-users, the real route, packing and",
    "store code on node:sqlite over simulated time. Loads beside published limits; cost per billion gateway requests",
    "at list prices.",
    "",
    "## The whole bill per billion gateway requests",
    "",
    "| mix | requests/min | records per POST | metering | access path | of which sticky sessions | total |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...bills.map(
      (bill) =>
        `| ${bill.scenario} | ${format(bill.requestsPerMinute)} | ${format(bill.recordsPerPost)} | $${bill.meteringUsd.toFixed(2)} | $${bill.accessPathUsd.toFixed(2)} | $${bill.sessionsUsd.toFixed(2)} | $${bill.totalUsd.toFixed(2)} |`,
    ),
    "",
  ];
  for (const result of all) {
    lines.push(
      `## ${result.scenario}, ${format(result.requestsPerMinute)} requests/min, ${format(result.recordsPerPost)} records per POST`,
      "",
    );
    lines.push("| part | load | limit | share |", "|---|---:|---:|---:|");
    for (const part of result.parts) {
      lines.push(
        `| ${part.part} | ${human(part.load, part.unit)} | ${human(part.limit, part.unit)} | ${((100 * part.load) / part.limit).toFixed(1)}% |`,
      );
    }
    const total = result.cost.reduce((sum, line) => sum + line.usdPerBillion, 0);
    lines.push("", `Cost per billion gateway requests: **$${total.toFixed(2)}**`, "");
    lines.push("| line | USD per billion |", "|---|---:|");
    for (const line of result.cost) lines.push(`| ${line.line} | ${line.usdPerBillion.toFixed(2)} |`);
    lines.push("", `Features: ${featuresLine(result)}.`);
    lines.push(
      "",
      `Hottest store: rank 1 at ${format(Math.round(result.hottest.ratePerMinute))} req/min in ${result.hottest.shards} shard(s).`,
      `Batch ledger: ${result.queues.ledger.shards} shards, ${result.queues.ledger.callsPerPost.toFixed(2)} calls and ${result.queues.ledger.rowsWrittenPerPost.toFixed(2)} rows written per POST.`,
      `Usage waits at most ${result.queues.worstDelaySeconds.toFixed(1)} s from its request to its store (gateway flush, the usage queue, a shard's window).`,
      `The ${refusalLine(result)}.`,
      "",
      "Store rows written per active account-minute, by table:",
      "",
      "| account rank | req/min | ingests/min | rows/minute | largest tables |",
      "|---:|---:|---:|---:|---|",
      ...result.samples.map(
        (sample) =>
          `| ${format(sample.rank)} | ${format(Math.round(sample.ratePerMinute))} | ${sample.ingestsPerMinute.toFixed(2)} | ${sample.rowsPerActiveMinute.toFixed(2)} | ${Object.entries(
            sample.rowsByTablePerMinute,
          )
            .sort((a, b) => b[1] - a[1])
            .slice(0, 6)
            .map(([table, rows]) => `${table} ${rows.toFixed(2)}`)
            .join(", ")} |`,
      ),
      "",
    );
  }
  return `${lines.join("\n")}\n`;
}

function format(n) {
  return n.toLocaleString("en-US");
}

function human(value, unit) {
  if (unit === "B" || unit === "B/s") {
    const units = ["B", "KB", "MB", "GB", "TB"];
    let v = value;
    let i = 0;
    while (v >= 1000 && i < units.length - 1) {
      v /= 1000;
      i++;
    }
    return `${v.toFixed(v < 10 ? 2 : 1)} ${units[i]}${unit === "B/s" ? "/s" : ""}`;
  }
  return `${value < 10 ? value.toFixed(2) : format(Math.round(value))} ${unit}`;
}

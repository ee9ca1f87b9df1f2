// `npm run soak -- --minutes N`: a long mixed load against the local worker and its gateway nodes, with faults
// injected on a schedule, then an exact reconciliation of what the API shows against what was sent.
//
//   npm run soak [-- --minutes 60 --nodes 3 --port 8817 --gateway-port 7817 --max-requests 200000 --persist-to <dir>
//                   --heap-snapshots <dir>]
//
// 1. Starts a loopback target server and webhook receiver, `wrangler dev` (fresh local state; `FAULTS=on`, which
//    serves `POST /internal/dev/faults`) and N gateway nodes in this process.
// 2. Sets up a new account: pools, sub-users that carry traffic, a webhook endpoint, report definitions.
// 3. Runs the load for `--minutes` (or until `--max-requests` calls): API reads and writes, proxied requests through
//    the nodes (rotating and sticky usernames, HTTP and CONNECT), usage posted directly (some twice), report runs.
//    Meanwhile: a traffic store aborted after an ingest, a usage message redelivered after it was applied, a gateway
//    node killed and restarted (each every minute), a settlement's D1 write failed (every 5 minutes); the cron every
//    5 s; the worker's heap every 30 s (through its inspector, after a full collection). The population (sub-users,
//    API keys, whitelist entries, sticky sessions; the account is made in step 2) grows only during the first
//    `minutes − 40` minutes (at least the warm-up: 5 minutes, or a quarter of a shorter run); after that nothing of
//    the kind is created or deleted (sticky sessions in use go on, one that expires replaced by its username's next
//    request), so that the heap's growth measures leaks, not population.
// 4. Waits for usage to settle and reconciles traffic, sessions, pools, sub-users' months, orders, the balance, the
//    ledger, webhooks and reports, each line expected / got / ok.
// 5. Prints heap over time, statuses, p50/p99 per route per 5 minutes and the goals; writes
//    bench/results/soak-<time>.json; exits 1 when a goal is missed.
//
// Goals: no 5xx but those the injected faults explain, each retried to success; the population fixed after its
// growth; the heap from a minute after the population's growth to the end grows ≤ 5%; the reconciliation exact;
// every kind of fault fired. Reported, not judged: the heap per object of the population (the heap's growth from the
// load's start to a minute after the population's growth, over the objects created meanwhile: sub-users, API keys,
// whitelist entries, sticky sessions; and over those live then), and latency (p99 drift is no goal: the soak's own
// full collections every 30 s stall the one thread `wrangler dev` shares).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { connectInspector } from "../bench/heap.mjs";
import { sleep } from "../bench/http.mjs";
import { prepare, root, startWorker } from "./lib/local-worker.mjs";
import { measuredApi } from "./lib/soak/api.mjs";
import { faultSchedule } from "./lib/soak/faults.mjs";
import { startFleet } from "./lib/soak/fleet.mjs";
import { newBook, runLoad } from "./lib/soak/load.mjs";
import { startReceiver, startTarget } from "./lib/soak/loopback.mjs";
import { createMetrics, heapGrowth, summarize, WINDOW_MS } from "./lib/soak/metrics.mjs";
import { reconcile } from "./lib/soak/reconcile.mjs";
import { setUpAccount } from "./lib/soak/setup.mjs";

const { values: options } = parseArgs({
  options: {
    minutes: { type: "string", default: "60" },
    nodes: { type: "string", default: "3" },
    port: { type: "string", default: "8817" },
    "gateway-port": { type: "string", default: "7817" },
    "inspector-port": { type: "string", default: "9317" },
    "max-requests": { type: "string", default: "200000" },
    "persist-to": { type: "string" },
    // Heap snapshots at the heap's baseline and at the end of the load, into this directory (diff them with
    // `node bench/heap-diff.mjs <first> <last>`).
    "heap-snapshots": { type: "string" },
    // The worker's own log (wrangler's request lines, `fault_injected` and `usage_failed` lines) on this output.
    verbose: { type: "boolean", default: false },
  },
});
const MINUTES = Number(options.minutes);
const NODES = Number(options.nodes);
const MAX_REQUESTS = Number(options["max-requests"]);
if (!(MINUTES > 0 && MINUTES <= 24 * 60)) throw new Error("--minutes: a number of minutes, at most a day");
if (!Number.isInteger(NODES) || NODES < 2 || NODES > 16) throw new Error("--nodes: 2 to 16 (one is killed at times)");
const HEAP_EVERY_MS = 30_000;
/** API calls at least this slow are listed in the results with their time. */
const SLOW_CALL_MS = 200;
const heapSnapshots = { baselineTaken: false };
const CRON_EVERY_MS = 5_000;
/** The heap's baseline is taken after this much load: 5 minutes, or a quarter of a shorter run. */
const WARM_UP_MS = Math.min(WINDOW_MS, (MINUTES * 60_000) / 4);
/** The population grows this long: all but the last 40 minutes, and at least the warm-up. */
const POPULATION_MS = Math.max(WARM_UP_MS, (MINUTES - 40) * 60_000);
/** The heap's baseline is taken this long after the population's growth (the last sessions' usage applied). */
const SETTLE_MS = 60_000;
const GOALS = { heapGrowth: 0.05 };
/** A restarted node's own 5xx and 429s this long after it is back are its kill's. */
const RESTARTED_NODE_MS = 60_000;

const scratch = !options["persist-to"];
const persistTo = options["persist-to"]
  ? path.resolve(options["persist-to"])
  : mkdtempSync(path.join(tmpdir(), "soak-"));
const target = await startTarget();
const receiver = await startReceiver();
const vars = prepare({ persistTo });
const gatewayPort = Number(options["gateway-port"]);
const { child, base } = await startWorker(Number(options.port), {
  quiet: !options.verbose,
  persistTo,
  inspectorPort: Number(options["inspector-port"]),
  vars: {
    FAULTS: "on",
    LOG_REQUESTS: "false",
    WEBHOOK_ALLOW_LOCAL_HTTP: "true",
    GATEWAY_PORT: String(gatewayPort),
    GATEWAY_SLOTS: String(NODES),
  },
});
const metrics = createMetrics({ maxRequests: MAX_REQUESTS });
const book = newBook();
let fleet;
let inspector;
let exitCode = 1;
try {
  fleet = await startFleet({ base, adminToken: vars.ADMIN_TOKEN, port: gatewayPort, count: NODES });
  inspector = await connectInspector(Number(options["inspector-port"]), () =>
    fetch(`${base}/healthz`).then((r) => r.arrayBuffer()),
  );
  const startedAt = Date.now();
  const setup = await setUpAccount(base, { adminToken: vars.ADMIN_TOKEN, receiver, book });
  const api = measuredApi(base, metrics);
  const ctx = { api, base, setup, target, receiver, fleet, metrics, book, startedAt, gatewayToken: vars.GATEWAY_TOKEN };
  console.log(
    `soak: ${MINUTES} min against ${base}, ${NODES} gateway nodes from :${gatewayPort}, account ${setup.accountId}`,
  );

  const faults = faultSchedule({ base, adminToken: vars.ADMIN_TOKEN, fleet, metrics });
  const deadline = Date.now() + MINUTES * 60_000;
  const stop = () => Date.now() >= deadline || metrics.capped();
  metrics.startLoad();
  ctx.populationEndsAt = metrics.loadStart + POPULATION_MS;
  const background = [cronTicks(stop), heapSamples(stop, faults), faults.run(stop)];
  await runLoad(ctx, stop);
  metrics.endLoad();
  await Promise.all(background);

  console.log("load done; waiting for usage to settle, then reconciling");
  await fleet.drain();
  const keepTicking = { done: false };
  const settling = cronTicks(() => keepTicking.done);
  const lines = await reconcile(ctx);
  keepTicking.done = true;
  await settling;
  await faults.poll();
  const faultCounts = faults.summary();

  const summary = summarize(metrics);
  const heap = heapGrowth(metrics.heap, metrics.loadStart, POPULATION_MS + SETTLE_MS);
  const population = populationOf(ctx.populationEndsAt, heap);
  const failures = explainFailures(metrics);
  const goals = judge({ heap, population, failures, lines, faultCounts });

  printReport({ summary, heap, population, failures, lines, goals, faultCounts });
  const file = writeResults({ summary, heap, population, failures, lines, goals, faultCounts, setup });
  console.log(`\nresults: ${path.relative(root, file)}`);
  exitCode = goals.every((goal) => goal.ok) ? 0 : 1;
} finally {
  inspector?.close();
  await fleet?.close();
  child.kill("SIGTERM");
  await Promise.all([target.close(), receiver.close()]);
  if (scratch) rmSync(persistTo, { recursive: true, force: true });
}
process.exit(exitCode);

// ── While the load runs ──────────────────────────────────────────────────────────────────────────────────

/** The Cron Trigger's jobs every 5 s, as `npm run dev` runs them (webhook retries, report schedules, …). */
async function cronTicks(stop) {
  while (!stop()) {
    await fetch(`${base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("* * * * *")}`).catch(() => {});
    await sleep(CRON_EVERY_MS);
  }
}

/** The worker's heap after a full collection, every 30 s and when the load ends, with a progress line. */
async function heapSamples(stop, faults) {
  for (;;) {
    const last = stop();
    await inspector.collectGarbage();
    const sample = { at: Date.now(), ...(await inspector.usage()) };
    metrics.heapSample(sample);
    const minute = ((sample.at - metrics.loadStart) / 60_000).toFixed(1);
    const counts = Object.entries(faults.summary()).map(([kind, c]) => `${kind} ${c.fired}`);
    const calls = metrics.calls.length;
    console.log(
      `  ${minute} min: heap ${mb(sample.used)} MB (buffers ${mb(sample.buffers)} MB), ${calls} calls, faults fired: ${counts.join(", ")}`,
    );
    await heapSnapshot(sample, last);
    if (last) return;
    for (let waited = 0; waited < HEAP_EVERY_MS && !stop(); waited += 1000) await sleep(1000);
  }
}

/** With `--heap-snapshots`: the first sample of the heap's baseline (after the population's growth) and the last. */
async function heapSnapshot(sample, last) {
  const dir = options["heap-snapshots"];
  if (!dir) return;
  const warm = sample.at >= metrics.loadStart + POPULATION_MS + SETTLE_MS;
  if (!last && (heapSnapshots.baselineTaken || !warm)) return;
  heapSnapshots.baselineTaken = true;
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${last ? "last" : "baseline"}.heapsnapshot`);
  await inspector.snapshot(file);
  console.log(`  heap snapshot: ${file}`);
}

// ── After ────────────────────────────────────────────────────────────────────────────────────────────────

/**
 * The fault that explains an answer at `at`, if any: an API 5xx one that fell while a store abort took effect; a
 * proxied one (5xx, cut, or a 429) one that fell within 15 s of any node's kill and restart (the fleet's leases move),
 * or came from the restarted node itself within its first `RESTARTED_NODE_MS` back (it relearns its sub-users and
 * leases them until its slot is vouched for).
 */
function explainedBy(answer, faultWindows) {
  const within = (from, to) => answer.at >= from && answer.at <= to;
  const window = faultWindows.find((w) => {
    if (answer.kind === "api") return w.kind === "store-abort" && within(w.from, w.to);
    if (w.kind !== "node-kill") return false;
    return within(w.from, w.to) || (answer.node === w.node && within(w.from, w.restartedAt + RESTARTED_NODE_MS));
  });
  return window?.kind ?? null;
}

function explainFailures({ failures, faultWindows }) {
  return failures.map((failure) => ({ ...failure, explainedBy: explainedBy(failure, faultWindows) }));
}

/**
 * The population the load made: per kind, the objects created and deleted while it grew (until `endsAt`) and after,
 * and those live when it stopped (sessions: opened by a request answered 200 — the store lists a session once its
 * first usage is applied — and live when listed; terminated ones are kept 24 hours, so they count as live). The
 * account and the objects set up before the load are not counted: the heap's first sample is taken after them. With
 * the heap's growth from its first sample to its baseline (`heap`), the heap per object created and per object live.
 */
function populationOf(endsAt, heap) {
  const kinds = ["subuser", "api-key", "whitelist"];
  const tally = (when) =>
    Object.fromEntries(
      kinds.map((kind) => {
        const events = book.population.filter((event) => event.kind === kind && when(event.at));
        const count = (change) => events.filter((event) => event.change === change).length;
        return [kind, { created: count("created"), deleted: count("deleted") }];
      }),
    );
  const growing = (at) => at < endsAt;
  const during = tally(growing);
  const after = tally((at) => !growing(at));
  const sessions = [...book.sessions.values()].filter((session) => session.firstUse);
  const liveAt = (session, at) =>
    growing(session.firstUse) && (session.terminated || session.firstUse + session.sesstime * 60_000 > at);
  during.session = { created: sessions.filter((s) => growing(s.firstUse)).length, deleted: 0 };
  const later = sessions.filter((s) => !growing(s.firstUse));
  // A session opened after the growth replaces an expired one (its username's next request) or is new population.
  after.session = {
    created: later.filter((s) => s.why !== "expired").length,
    deleted: 0,
    replacingExpired: later.filter((s) => s.why === "expired").length,
  };
  const live = {
    ...Object.fromEntries(kinds.map((kind) => [kind, during[kind].created - during[kind].deleted])),
    session: sessions.filter((session) => liveAt(session, endsAt)).length,
  };
  const total = (byKind) => Object.values(byKind).reduce((sum, n) => sum + (typeof n === "number" ? n : n.created), 0);
  const start = metrics.heap[0];
  const perObject =
    heap && start
      ? {
          heapStart: start.used,
          heapAfterGrowth: heap.baseline,
          growthBytes: heap.baseline - start.used,
          objectsCreated: total(during),
          objectsLive: total(live),
          bytesPerObjectCreated: Math.round((heap.baseline - start.used) / Math.max(1, total(during))),
          bytesPerLiveObject: Math.round((heap.baseline - start.used) / Math.max(1, total(live))),
        }
      : null;
  return {
    growthMs: POPULATION_MS,
    endsAt,
    counted:
      "sub-users, API keys and whitelist entries the load created; sticky sessions it opened (first request " +
      "answered 200), including those a username opened after a DELETE; not the account and its set-up objects",
    during,
    after,
    live,
    perObject,
  };
}

/** The goals, each met or missed, with the figures that decide it. */
function judge({ heap, population, failures, lines, faultCounts }) {
  const createdAfter = Object.entries(population.after).filter(([, c]) => c.created > 0 || c.deleted > 0);
  return [
    {
      goal: "5xx: each explained by an injected fault and retried to success",
      ok: failures.every((failure) => failure.explainedBy && failure.retried),
      detail: `${failures.length} 5xx or cut, ${failures.filter((f) => !f.explainedBy).length} unexplained, ${failures.filter((f) => !f.retried).length} not retried to success`,
    },
    {
      goal: `population fixed after minute ${POPULATION_MS / 60_000}: no sub-user, API key, whitelist entry or session created or deleted`,
      ok: createdAfter.length === 0,
      detail:
        (createdAfter.length === 0
          ? "none"
          : createdAfter.map(([kind, c]) => `${kind} +${c.created} −${c.deleted}`).join(", ")) +
        `; sessions replacing expired ones: ${population.after.session.replacingExpired}`,
    },
    {
      goal: `heap from minute ${(POPULATION_MS + SETTLE_MS) / 60_000} (population fixed) to the end grows ≤ ${GOALS.heapGrowth * 100}%`,
      ok: heap !== null && heap.growth <= GOALS.heapGrowth,
      detail: heap
        ? `${mb(heap.baseline)} MB → ${mb(heap.final)} MB (${(heap.growth * 100).toFixed(1)}%)`
        : "too few samples after the population's growth",
    },
    {
      goal: "reconciliation exact",
      ok: lines.every((entry) => entry.ok),
      detail: `${lines.filter((entry) => entry.ok).length} of ${lines.length} lines`,
    },
    {
      goal: "every kind of fault fired",
      ok: Object.values(faultCounts).every((counts) => counts.fired > 0),
      detail: Object.entries(faultCounts)
        .map(([kind, counts]) => `${kind} ${counts.fired}/${counts.armed}`)
        .join(", "),
    },
  ];
}

function printReport({ summary, heap, population, failures, lines, goals, faultCounts }) {
  console.log("\nheap (after a full collection)");
  for (const sample of metrics.heap) {
    const minute = ((sample.at - metrics.loadStart) / 60_000).toFixed(1).padStart(6);
    console.log(
      `  ${minute} min  ${mb(sample.used).toFixed(1).padStart(7)} MB  buffers ${mb(sample.buffers).toFixed(1)} MB`,
    );
  }
  if (heap) console.log(`  population fixed: ${mb(heap.baseline)} → ${mb(heap.final)} MB`);
  const kinds = Object.keys(population.during);
  console.log(`\npopulation (growth until minute ${population.growthMs / 60_000}; ${population.counted})`);
  for (const kind of kinds) {
    const { during, after, live } = {
      during: population.during[kind],
      after: population.after[kind],
      live: population.live[kind],
    };
    console.log(
      `  ${kind.padEnd(9)} while growing +${during.created} −${during.deleted}, live then ${live}; after +${after.created} −${after.deleted}` +
        (kind === "session" ? ` (and ${after.replacingExpired} replacing expired ones)` : ""),
    );
  }
  const per = population.perObject;
  if (per) {
    console.log(
      `  heap per object: ${mb(per.heapStart)} MB at the load's start → ${mb(per.heapAfterGrowth)} MB after the growth ` +
        `(${(per.growthBytes / 1e3).toFixed(0)} kB) over ${per.objectsCreated} objects created = ${per.bytesPerObjectCreated} B each; ` +
        `over ${per.objectsLive} live = ${per.bytesPerLiveObject} B each`,
    );
  }

  console.log("\nanswers by status");
  for (const [kind, counts] of Object.entries(summary.statuses)) {
    console.log(
      `  ${kind.padEnd(6)} ${Object.entries(counts)
        .map(([status, n]) => `${status}: ${n}`)
        .join(", ")}`,
    );
  }
  const refusals = Object.groupBy(book.proxyRefusals, (refusal) => `${refusal.status} ${refusal.errorCode}`);
  for (const [kind, list] of Object.entries(refusals)) {
    const explained = list.filter((refusal) => explainedBy({ ...refusal, kind: "proxy" }, metrics.faultWindows));
    const retried = list.filter((refusal) => refusal.attempt > 1).length;
    console.log(
      `  gateway refused ${kind}: ${list.length} (${explained.length} around a node kill; ${retried} were retries), ` +
        `at ${list
          .slice(0, 8)
          .map((refusal) => `${minuteOf(refusal.at)} ${refusal.node}`)
          .join(", ")}${list.length > 8 ? ", …" : ""}`,
    );
  }
  for (const [message, count] of Object.entries(book.scriptErrors))
    console.log(`  soak call failed ×${count}: ${message}`);
  console.log(`\n5xx and cut connections: ${failures.length}`);
  for (const failure of failures.slice(0, 20)) {
    console.log(
      `  ${minuteOf(failure.at)} min ${failure.kind} ${failure.route}${failure.node ? ` (${failure.node})` : ""} → ` +
        `${failure.status}${failure.errorCode ? ` ${failure.errorCode}` : ""} (attempt ${failure.attempt}); ` +
        `${failure.explainedBy ? `explained by ${failure.explainedBy}` : "UNEXPLAINED"}; ${failure.retried ? "retried to success" : "NOT retried to success"}`,
    );
  }

  const header = Array.from({ length: summary.windows }, (_, i) => `${i * 5}-${(i + 1) * 5} min`.padStart(15)).join("");
  console.log(
    `\np50 / p99 ms per 5 minutes (n; for information: the soak's full collections stall wrangler dev's one thread)\n  ${"route".padEnd(52)}${header}   first → last p99`,
  );
  for (const row of summary.latency) {
    const cells = row.windows.map((w) => (w.n ? `${w.p50}/${w.p99} (${w.n})` : "-").padStart(15)).join("");
    const verdict = row.first.n && row.last.n ? `${row.first.p99} → ${row.last.p99}` : "";
    console.log(`  ${row.route.padEnd(52)}${cells}   ${verdict}`);
  }

  const kills = faultCounts["node-kill"].kills.map(
    (kill) => `${kill.node} ${minuteOf(kill.killedAt)}–${minuteOf(kill.restartedAt)}`,
  );
  console.log(`\nnode kills (min): ${kills.join(", ")}`);
  console.log(
    `faults (fired / armed): ${JSON.stringify(Object.fromEntries(Object.entries(faultCounts).map(([k, c]) => [k, `${c.fired}/${c.armed}`])))}`,
  );
  console.log("\nreconciliation (expected / got / ok)");
  for (const entry of lines) {
    console.log(
      `  ${entry.ok ? "ok " : "BAD"} ${entry.check}: ${JSON.stringify(entry.expected)} / ${JSON.stringify(entry.got)}`,
    );
  }
  console.log("\ngoals");
  for (const goal of goals) console.log(`  ${goal.ok ? "met   " : "MISSED"} ${goal.goal}: ${goal.detail}`);
}

function writeResults(results) {
  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `soak-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  const record = {
    at: new Date().toISOString(),
    minutes: MINUTES,
    nodes: NODES,
    maxRequests: MAX_REQUESTS,
    calls: metrics.calls.length,
    goals: results.goals,
    heap: {
      samples: metrics.heap,
      warmUpMs: WARM_UP_MS,
      populationMs: POPULATION_MS,
      baselineFromMs: POPULATION_MS + SETTLE_MS,
      growth: results.heap,
      perObject: results.population.perObject,
    },
    population: results.population,
    statuses: results.summary.statuses,
    latency: results.summary.latency,
    failures: results.failures,
    // The slow API calls, to set beside the fault windows and heap samples (each a full collection).
    slowCalls: metrics.calls.filter((call) => call.kind === "api" && call.ms >= SLOW_CALL_MS),
    faults: results.faultCounts,
    faultWindows: metrics.faultWindows,
    reconciliation: results.lines,
    book: {
      orders: book.orders.size,
      replays: book.replays,
      directCopies: book.directCopies,
      sessions: book.sessions.size,
      sessionsOpened: [...book.sessions.values()].filter((session) => session.firstUse).length,
      reports: book.reports,
      proxyRefusals: book.proxyRefusals,
      scriptErrors: book.scriptErrors,
    },
  };
  writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
  return file;
}

/** Minutes since the load started, as printed. */
function minuteOf(at) {
  return ((at - metrics.loadStart) / 60_000).toFixed(2);
}

function mb(bytes) {
  return Math.round(bytes / 1e5) / 10;
}

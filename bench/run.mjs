// `npm run bench`: starts the worker locally (wrangler dev), drives each route with autocannon, and compares
// every route with a bare route (GET /healthz) measured in the same run. Results: bench/results/<date>.json and
// latest.md.
//
// Each run starts from a fresh, migrated local database kept in memory (tmpfs): the figures then measure the
// API's work rather than this machine's disk flushes (local D1 and Durable Object storage fsync every commit,
// which production storage does not do on the request path), and runs do not inherit each other's data.
// BENCH_STATE=disk keeps the state in .wrangler/ instead, for comparison.
//
// Order of a run:
//  1. Set-up: the bench account (API limits raised, a residential pool bought: without one the gateway refuses
//     residential traffic with 402 bandwidth-exhausted) and its sub-users.
//  2. (a) Usage ingestion end to end (bench/ingest.mjs): records/s from the first POST of 1,000-record batches
//     until the traffic stores count them all. Measured on a quiet worker, before anything else loads it.
//  3. (b) Seeding 90 days of history for 1,000 sub-users (bench/seed-traffic.mjs), then a wait for the stores'
//     fold (a few minutes after the last usage), so no background work runs during the autocannon measurements.
//  4. autocannon, one route after another (2 s warm-up, then BENCH_DURATION s): the bare route, the existing
//     routes, (c) authorize with sticky-session usernames, the two (b) traffic queries (answers checked once), and
//     last the bare route proxied through the local gateway (gateway/).
// Every row is reported with its ratio to the bare route's req/s and, where one is set, its goal (GOALS). The
// ingestion row has no goal: on one machine the route, both queues, the consumers and the stores share one thread.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { startLocalNode } from "../gateway/local-node.ts";
import { ensureAccount, prepare, root, startWorker } from "../scripts/lib/local-worker.mjs";
import { BENCH_LIMITS, buyBandwidth, freshAccount } from "./accounts.mjs";
import { cpuSpent, treeCpu } from "./cpu.mjs";
import { apiClient, inParallel } from "./http.mjs";
import { measureIngestion, setUpIngestion } from "./ingest.mjs";
import { measureSignIns, sessionTarget, setUpMembers, workerdCpuMs } from "./members.mjs";
import { seedTrafficHistory, trafficQueryTargets } from "./seed-traffic.mjs";
import { rotatingUsername, sessionUsername } from "./usage.mjs";

const PORT = 8799;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ON_DISK = process.env.BENCH_STATE === "disk";
/**
 * For quick iterations, printed and not kept: `BENCH_ONLY=ingestion` measures the bare route and ingestion only;
 * any other value the bare route and the rows whose name contains it (e.g. `BENCH_ONLY=orders`), without the
 * ingestion and the traffic history. `BENCH_ONLY=member` measures the members' rows (a sign-in's CPU, the session
 * check beside the same call with a key), kept in bench/results/members-<date>.json.
 */
const ONLY = process.env.BENCH_ONLY;
const INGESTION_ONLY = ONLY === "ingestion";
/** Accounts of the second orders row: orders spread over a fleet of customers, as production sees them. */
const ORDER_ACCOUNTS = 50;
const BARE = { name: "bare route (GET /healthz)", path: "/healthz", bare: true };
const INGEST = {
  batches: Number(process.env.BENCH_INGEST_BATCHES ?? 200),
  concurrency: Number(process.env.BENCH_INGEST_CONCURRENCY ?? 8),
};
const HISTORY = {
  subusers: Number(process.env.BENCH_TRAFFIC_SUBUSERS ?? 1000),
  minuteSubusers: Number(process.env.BENCH_MINUTE_SUBUSERS ?? 50),
  concurrency: 12,
};
/** Sticky sessions the session-authorize target cycles through (each reused, as a gateway reuses a username). */
const AUTHORIZE_SESSIONS = 100;
const GOALS = { sessionAuthorize: 0.5 };

const persistTo = ON_DISK
  ? undefined
  : mkdtempSync(path.join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bench-"));
const vars = prepare({ persistTo });
const { child, base } = await startWorker(PORT, { quiet: true, persistTo, vars: { LOG_REQUESTS: "false" } });
const api = apiClient(base);
const gatewayAuth = { Authorization: `Bearer ${vars.GATEWAY_TOKEN}`, "Content-Type": "application/json" };
const tokens = { adminToken: vars.ADMIN_TOKEN, gatewayToken: vars.GATEWAY_TOKEN };
// The local gateway (gateway/), for proxied requests next to direct ones.
const gateway = await startLocalNode({ port: 0, apiOrigin: base, adminToken: vars.ADMIN_TOKEN, nodeId: "bench-node" });

try {
  const account = await ensureAccount(base, vars.ADMIN_TOKEN, {
    email: "bench@example.com",
    plan: "enterprise",
    balance_usd: 1_000_000,
    topUpTo: 1_000_000,
    limits: BENCH_LIMITS,
    file: "bench-account.json",
  });
  const auth = { Authorization: `Bearer ${account.token}` };
  await buyBandwidth(api, auth);

  // The members' rows (sign-in, the session check): members made before anything is measured.
  const members =
    !ONLY || /sign-in|session|member/.test(ONLY) ? await setUpMembers(api, vars.ADMIN_TOKEN, account.accountId) : null;

  if (ONLY && !INGESTION_ONLY) {
    const usersMe = usersMeTarget(auth);
    const quick = [BARE, usersMe, ...(members ? [sessionTarget(members)] : []), await proxiedTarget(auth)];
    // The orders rows set up 50 accounts first: only when asked for.
    const orders = ONLY.includes("orders") ? await ordersTargets(auth) : [];
    // The session check is judged against the same call with a key: measured beside it.
    const targets = [...quick, ...orders].filter(
      (target) => target.bare || target.name.includes(ONLY) || (members && target === usersMe),
    );
    const rows = [];
    for (const target of targets) rows.push(await measure(target));
    if (members && /sign-in|member/.test(ONLY)) rows.push(await measureSignIns(base, members, child.pid));
    const bare = rows[0];
    for (const row of rows) {
      const cpu = Object.entries(row.cpuMsPerRequest).filter(
        ([key]) => key.startsWith("workerd") && !key.endsWith("busiest"),
      );
      console.log(
        `${row.name}: ${Math.round(row.rps)} req/s = ${ratio(row, row.rps / bare.rps)} of bare, workerd CPU ms per request ${cpu.map(([, ms]) => ms).join(" + ")}`,
      );
    }
    for (const row of rows) judgeCpu(row, rows);
    for (const row of rows.filter((each) => each.cpuGoal)) console.log(`${row.name}: ${row.cpuGoal}`);
    // The members' rows are kept (bench/results/members-<date>.json): their goals are CPU, not ratios.
    if (members) {
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const record = { only: ONLY, connections: CONNECTIONS, durationS: DURATION_S, rows };
      writeFileSync(path.join(root, "bench", "results", `members-${stamp}.json`), JSON.stringify(record, null, 2));
    }
    await stop();
    process.exit(0);
  }
  const { details: ingestion, ...ingestionRow } = await measureIngestion(
    api,
    vars.GATEWAY_TOKEN,
    await setUpIngestion(api, tokens),
    { ...INGEST, cpuSample: () => treeCpu(child.pid) },
  );
  console.log(`usage ingestion: ${Math.round(ingestionRow.rps)} records/s ${JSON.stringify(ingestion)}`);
  if (INGESTION_ONLY) {
    const bare = await measure(BARE);
    console.log(`bare ${Math.round(bare.rps)} req/s; ingestion = ${(ingestionRow.rps / bare.rps).toFixed(1)}× bare`);
    console.log(`bare route CPU ms per request: ${JSON.stringify(bare.cpuMsPerRequest)}`);
    await stop();
    process.exit(0);
  }
  const history = await seedTrafficHistory(api, tokens, HISTORY);
  console.log(`traffic history seeded: ${JSON.stringify(history.details)}; waiting for the store's fold`);

  const targets = [
    BARE,
    usersMeTarget(auth),
    sessionTarget(members),
    await authorizeTarget(auth),
    await sessionAuthorizeTarget(auth),
    ...(await ordersTargets(auth)),
    ...(await trafficQueryTargets(api, history)),
    // Last: the usage its requests report is ingested in the background, which would slow the rows after it.
    await proxiedTarget(auth),
  ];

  const rows = [];
  for (const target of targets) rows.push(await measure(target));
  rows.push({
    name: `usage ingestion, records/s (POST /internal/gateway/usage, 1,000 records × ${ingestion.batches}, until counted)`,
    bare: false,
    unit: "records/s",
    ...ingestionRow,
  });
  rows.push(await measureSignIns(base, members, child.pid));
  report(rows, { ingestion, history: history.details });
} finally {
  await stop();
}

async function stop() {
  await gateway.close();
  child.kill("SIGTERM");
  if (persistTo) rmSync(persistTo, { recursive: true, force: true });
}

function usersMeTarget(auth) {
  return { name: "GET /v1/users/me", path: "/v1/users/me", headers: auth };
}

/** The two orders rows: the bench account alone, and `ORDER_ACCOUNTS` new accounts. */
async function ordersTargets(auth) {
  return [
    ordersTarget("POST /v1/orders (bandwidth, one account)", [auth]),
    ordersTarget(`POST /v1/orders (bandwidth, ${ORDER_ACCOUNTS} accounts)`, await fleetAuths()),
  ];
}

/**
 * Bandwidth orders (1 MB each, distinct Idempotency-Keys), each connection cycling through the accounts' keys:
 * one account is a single customer ordering as fast as it can, many accounts what a fleet of customers does.
 */
function ordersTarget(name, auths) {
  return {
    name,
    path: "/v1/orders",
    method: "POST",
    requests: auths.map((auth) => ({
      headers: { ...auth, "Content-Type": "application/json", "Idempotency-Key": "bench-[<id>]" },
      body: JSON.stringify({ product: "residential", gb: 0.001 }),
    })),
    idReplacement: true,
  };
}

/** The API-key headers of `ORDER_ACCOUNTS` new accounts (pools bought, limits raised). */
async function fleetAuths() {
  const accounts = Array.from({ length: ORDER_ACCOUNTS });
  const fleet = await inParallel(accounts, 8, () => freshAccount(api, vars.ADMIN_TOKEN, "bench-fleet"));
  return fleet.map((account) => account.auth);
}

/**
 * The bare route again, but as an HTTP proxy request through the local gateway (keep-alive connections: the node
 * decides every request itself, and reports every request as usage).
 */
async function proxiedTarget(auth) {
  const subuser = await newBenchSubuser(auth, "bench-proxy");
  const credentials = Buffer.from(`${rotatingUsername(subuser.name)}:${subuser.password}`).toString("base64");
  return {
    name: "proxied GET /healthz through the local gateway (gateway/)",
    url: `http://127.0.0.1:${gateway.port}`,
    headers: { "Proxy-Authorization": `Basic ${credentials}` },
    requests: [{ path: `${base}/healthz` }],
  };
}

/** The existing authorize target: a fresh sub-user per run, so leases left by an earlier run (10 min) do not fill its slots. */
async function authorizeTarget(auth) {
  const subuser = await newBenchSubuser(auth, "bench");
  const body = {
    username: rotatingUsername(subuser.name),
    password: subuser.password,
    source_ip: "198.51.100.10",
    product: "residential",
  };
  return {
    name: "POST /internal/gateway/authorize",
    path: "/internal/gateway/authorize",
    method: "POST",
    headers: gatewayAuth,
    body: JSON.stringify(body),
    // Every decision is a 200; check an allow so refusals cannot pass for throughput.
    check: async () => {
      const decision = await api.post("/internal/gateway/authorize", gatewayAuth, body);
      return decision.allow ? null : `the last decision was a refusal: ${JSON.stringify(decision)}`;
    },
  };
}

/** (c) Authorize with sticky-session usernames (their own sub-user): 100 sessions, pinned once, then reused. */
async function sessionAuthorizeTarget(auth) {
  const subuser = await newBenchSubuser(auth, "bench-sessions");
  const body = (i) => ({
    username: sessionUsername(subuser.name, `bench${i}`),
    password: subuser.password,
    source_ip: "198.51.100.10",
    product: "residential",
  });
  return {
    name: "POST /internal/gateway/authorize, session usernames",
    path: "/internal/gateway/authorize",
    method: "POST",
    headers: gatewayAuth,
    requests: Array.from({ length: AUTHORIZE_SESSIONS }, (_, i) => ({ body: JSON.stringify(body(i)) })),
    goal: GOALS.sessionAuthorize,
    check: async () => {
      const decision = await api.post("/internal/gateway/authorize", gatewayAuth, body(0));
      const session = decision.session;
      const ok = decision.allow && session && /^ses_/.test(session.id) && Date.parse(session.expires_at) > Date.now();
      return ok ? null : `no live session in the decision: ${JSON.stringify(decision)}`;
    },
  };
}

function newBenchSubuser(auth, prefix) {
  return api.post("/v1/subusers", auth, {
    label: `${prefix}-${Date.now()}`,
    products: ["residential"],
    concurrent_max: 10_000,
    rps_max: 10_000,
  });
}

/** One autocannon target: a warm-up, the measured run, then its check. */
async function measure(target) {
  await run(target, 2); // warm-up
  const cpuBefore = treeCpu(child.pid);
  const result = await run(target, DURATION_S);
  const cpu = cpuSpent(cpuBefore, treeCpu(child.pid));
  const answered = result["2xx"] + result.non2xx;
  const failure = target.check ? await target.check() : null;
  if (failure) throw new Error(`${target.name}: ${failure}`);
  return {
    name: target.name,
    bare: Boolean(target.bare),
    unit: "req/s",
    goal: target.goal,
    cpuOver: target.cpuOver,
    cpuOverGoalMs: target.cpuOverGoalMs,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result["2xx"],
    errors: result.non2xx + result.errors,
    cpuMsPerRequest: Object.fromEntries(
      Object.entries(cpu).map(([process, ms]) => [process, Math.round((ms / answered) * 100) / 100]),
    ),
  };
}

function run(target, duration) {
  return autocannon({
    url: target.url ?? `${base}${target.path}`,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
    requests: target.requests,
    idReplacement: target.idReplacement ?? false,
    connections: CONNECTIONS,
    duration,
  });
}

/** The table (console and latest.md) and the JSON record of the run. */
function report(rows, details) {
  const bare = rows.find((row) => row.bare);
  for (const row of rows) {
    row.vsBare = row.rps / bare.rps;
    if (row.goal !== undefined) row.goalMet = row.vsBare >= row.goal;
    judgeCpu(row, rows);
  }
  const lines = [
    `# Benchmark ${new Date().toISOString()}`,
    "",
    `wrangler dev on this machine (local state ${ON_DISK ? "on disk" : "in memory"}), autocannon ${CONNECTIONS} connections, ` +
      `${DURATION_S} s per route (after a 2 s warm-up).`,
    "",
    "| route | req/s | p50 ms | p99 ms | vs bare (req/s) | goal | non-2xx |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${ratio(row, row.vsBare)} | ` +
        `${row.goal === undefined ? (row.cpuGoal ?? "") : `≥ ${ratio(row, row.goal)} ${row.goalMet ? "met" : "**missed**"}`} | ${row.errors} |`,
    ),
    "",
    ...notes(details),
  ];
  console.log(`\n${lines.join("\n")}\n`);

  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const record = {
    connections: CONNECTIONS,
    durationS: DURATION_S,
    state: ON_DISK ? "disk" : "memory",
    rows,
    ...details,
  };
  writeFileSync(path.join(dir, `${stamp}.json`), JSON.stringify(record, null, 2));
  writeFileSync(path.join(dir, "latest.md"), `${lines.join("\n")}\n`);
}

function notes({ ingestion, history }) {
  return [
    `Usage ingestion: ${ingestion.records.toLocaleString("en")} records in ${ingestion.batches} batches, ` +
      `${ingestion.concurrency} in flight, ${ingestion.accounts} accounts, ${ingestion.subusers} sub-users, ` +
      `${ingestion.sessionShare * 100}% session usage; posted in ${ingestion.secondsPosting} s ` +
      `(${ingestion.postsPerSecond} POST/s), all counted by GET /v1/residential/traffic after ` +
      `${ingestion.secondsUntilAbsorbed} s; its req/s is records/s and its p50/p99 the POSTs' latency.`,
    `Traffic queries: one account, ${history.subusers.toLocaleString("en")} sub-users, ` +
      `${history.records.toLocaleString("en")} records seeded in ${history.batches} batches (${history.secondsSeeding} s), ` +
      "read after the store's fold; each answer checked once against the seeding.",
  ];
}

/**
 * The CPU goals, judged on workerd's CPU per request: a sign-in's own (`cpuGoalMs`), or what a row adds over another
 * row of the run (`cpuOver`, `cpuOverGoalMs`: the session check over the same call with an API key).
 */
function judgeCpu(row, rows) {
  const cpu = workerdCpuMs(row);
  if (row.cpuGoalMs !== undefined) {
    row.goalMet = cpu <= row.cpuGoalMs;
    row.cpuGoal = `≤ ${row.cpuGoalMs} ms CPU: ${cpu.toFixed(1)} ms ${row.goalMet ? "met" : "**missed**"}`;
  }
  const over = row.cpuOver && rows.find((other) => other.name === row.cpuOver);
  if (over) {
    const added = cpu - workerdCpuMs(over);
    row.goalMet = added <= row.cpuOverGoalMs;
    row.cpuGoal = `≤ +${row.cpuOverGoalMs} ms CPU over \`${over.name}\`: ${added >= 0 ? "+" : ""}${added.toFixed(2)} ms ${row.goalMet ? "met" : "**missed**"}`;
  }
}

/** A ratio to the bare route's req/s: a percentage for routes, a multiple for records/s. */
function ratio(row, value) {
  return row.unit === "records/s" ? `${Number(value.toFixed(1))}×` : `${(value * 100).toFixed(0)}%`;
}

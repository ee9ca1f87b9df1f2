// `npm run bench`: starts the worker locally (wrangler dev), drives each route with autocannon, and compares
// every route with a bare route measured in the same run. Results: bench/results/<date>.json and latest.md.
//
// Each run starts from a fresh, migrated local database kept in memory (tmpfs): the figures then measure the
// API's work rather than this machine's disk flushes (local D1 and Durable Object storage fsync every commit,
// which production storage does not do on the request path), and runs do not inherit each other's data.
// BENCH_STATE=disk keeps the state in .wrangler/ instead, for comparison.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { ensureAccount, prepare, root, startWorker } from "../scripts/lib/local-worker.mjs";

const PORT = 8799;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ON_DISK = process.env.BENCH_STATE === "disk";

const persistTo = ON_DISK
  ? undefined
  : mkdtempSync(path.join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bench-"));
const vars = prepare({ persistTo });
const { child, base } = await startWorker(PORT, { quiet: true, persistTo, vars: { LOG_REQUESTS: "false" } });

try {
  const account = await ensureAccount(base, vars.ADMIN_TOKEN, {
    email: "bench@example.com",
    plan: "enterprise",
    balance_usd: 1_000_000,
    // The benchmark measures the API's work, not its rate limiter's refusals.
    limits: {
      api_burst_per_min: 1_000_000_000,
      api_daily: null,
      concurrent: { residential: 10_000 },
      rps: { residential: 10_000 },
    },
    file: "bench-account.json",
  });
  const auth = { Authorization: `Bearer ${account.token}` };
  // A fresh sub-user per run, so leases left by an earlier run (they live 10 minutes) do not fill its slots.
  const subuser = await post(`${base}/v1/subusers`, auth, {
    label: `bench-${Date.now()}`,
    products: ["residential"],
    concurrent_max: 10_000,
    rps_max: 10_000,
  });
  const gatewayAuth = { Authorization: `Bearer ${vars.GATEWAY_TOKEN}`, "Content-Type": "application/json" };
  const authorizeBody = JSON.stringify({
    username: `user_${subuser.name}-type-res-region-us`,
    password: subuser.password,
    source_ip: "198.51.100.10",
    product: "residential",
  });

  const targets = [
    { name: "bare route (GET /healthz)", path: "/healthz", bare: true },
    { name: "GET /v1/users/me", path: "/v1/users/me", headers: auth },
    {
      name: "POST /internal/gateway/authorize",
      path: "/internal/gateway/authorize",
      method: "POST",
      headers: gatewayAuth,
      body: authorizeBody,
      // Every decision is a 200; count the allows separately so refusals cannot pass for throughput.
      check: async () =>
        (await post(`${base}/internal/gateway/authorize`, gatewayAuth, JSON.parse(authorizeBody))).allow,
    },
  ];

  targets.push({
    name: "POST /v1/orders (bandwidth, distinct Idempotency-Keys)",
    path: "/v1/orders",
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json", "Idempotency-Key": "bench-[<id>]" },
    body: JSON.stringify({ product: "residential", gb: 0.001 }),
    idReplacement: true,
  });

  const rows = [];
  for (const target of targets) {
    await run(target, 2); // warm-up
    const result = await run(target, DURATION_S);
    if (target.check && !(await target.check())) throw new Error(`${target.name}: the last decision was a refusal`);
    rows.push({
      name: target.name,
      bare: Boolean(target.bare),
      rps: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      ok: result["2xx"],
      errors: result.non2xx + result.errors,
    });
  }

  const bare = rows.find((row) => row.bare);
  const lines = [
    `# Benchmark ${new Date().toISOString()}`,
    "",
    `wrangler dev on this machine (local state ${ON_DISK ? "on disk" : "in memory"}), autocannon ${CONNECTIONS} connections, ` +
      `${DURATION_S} s per route (after a 2 s warm-up).`,
    "",
    "| route | req/s | p50 ms | p99 ms | vs bare (req/s) | non-2xx |",
    "|---|---:|---:|---:|---:|---:|",
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p50} | ${row.p99} | ${((row.rps / bare.rps) * 100).toFixed(0)}% | ${row.errors} |`,
    ),
  ];
  console.log(`\n${lines.join("\n")}\n`);

  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  writeFileSync(
    path.join(dir, `${stamp}.json`),
    JSON.stringify(
      { connections: CONNECTIONS, durationS: DURATION_S, state: ON_DISK ? "disk" : "memory", rows },
      null,
      2,
    ),
  );
  writeFileSync(path.join(dir, "latest.md"), `${lines.join("\n")}\n`);
} finally {
  child.kill("SIGTERM");
  if (persistTo) rmSync(persistTo, { recursive: true, force: true });
}

async function post(url, headers, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const payload = await response.json();
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${JSON.stringify(payload)}`);
  return payload;
}

function run(target, duration) {
  return autocannon({
    url: `${base}${target.path}`,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
    idReplacement: target.idReplacement ?? false,
    connections: CONNECTIONS,
    duration,
  });
}

// `npm run bench` (after the API rows): the live tail's latency under production queue windows. `wrangler dev` with
// wrangler.toml's batch windows as deployed (usage waits up to 55 s in the accounts' shard queues), three accounts,
// one with a tail open (GET /v1/residential/requests/tail); usage batches mixing the three posted to
// POST /internal/gateway/usage, 4 in flight. Measured: from the start of each POST to the arrival on the tail of each
// of the tailed account's records in it, p50 and p99 (goal p99 ≤ 2 s); and how many of them the account's traffic
// had counted when the last arrived (the queue's windows still hold them: the tail does not wait for the queue).
// Results: bench/results/tail-<time>.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { prepare, root, startWorker } from "../scripts/lib/local-worker.mjs";
import { openTail } from "../scripts/lib/tail-client.mjs";
import { createSubusers, freshAccount } from "./accounts.mjs";
import { apiClient, fetchFresh, inParallel, percentile, sleep } from "./http.mjs";
import { random, rotatingUsername, totalRequests, usageRecord } from "./usage.mjs";

const PORT = 8797;
const BATCHES = Number(process.env.BENCH_TAIL_BATCHES ?? 200);
/** Per batch: the tailed account's records (all shown: under the 100 a minute a batch samples) and the others'. */
const TAILED_RECORDS = 50;
const OTHER_RECORDS = 450;
const IN_FLIGHT = 4;
const GOAL_P99_MS = 2000;

const state = mkdtempSync(path.join(tmpdir(), "bench-tail-"));
const vars = prepare({ persistTo: state });
const { child, base } = await startWorker(PORT, {
  quiet: true,
  persistTo: state,
  queueWindows: "production",
  vars: { LOG_REQUESTS: "false" },
});
try {
  const api = apiClient(base);
  const accounts = await inParallel(["bench-tail", "bench-tail-other-1", "bench-tail-other-2"], 3, (label) =>
    freshAccount(api, vars.ADMIN_TOKEN, label),
  );
  const names = await inParallel(accounts, 3, async (account) => {
    const [subuser] = await createSubusers(api, account.auth, { count: 1, prefix: "bench-tail" });
    return rotatingUsername(subuser.name);
  });
  const startedAt = Date.now();
  const sentAt = new Map();
  const latencies = [];
  const tail = await openTail({
    base,
    token: accounts[0].auth.Authorization.slice("Bearer ".length),
    onRecord: (record, receivedAt) => {
      const sent = sentAt.get(record.request_id);
      if (sent !== undefined) latencies.push(receivedAt - sent);
    },
  });

  const rng = random(38);
  const runTag = Date.now().toString(36);
  const headers = {
    Authorization: `Bearer ${vars.GATEWAY_TOKEN}`,
    "Content-Type": "application/json",
    "Content-Encoding": "gzip",
  };
  await inParallel(
    Array.from({ length: BATCHES }, (_, batch) => batch),
    IN_FLIGHT,
    async (batch) => {
      const records = Array.from({ length: TAILED_RECORDS + OTHER_RECORDS }, (_, i) =>
        usageRecord(rng, {
          requestId: `req_${runTag}t${batch.toString(36)}i${i.toString(36)}`,
          username: i < TAILED_RECORDS ? names[0] : names[1 + (i % 2)],
          ts: Date.now(),
        }),
      );
      const body = gzipSync(JSON.stringify({ batch_id: `bench-tail-${runTag}-${batch}`, records }));
      const sent = performance.now();
      for (const record of records.slice(0, TAILED_RECORDS)) sentAt.set(record.request_id, sent);
      const response = await fetchFresh(`${base}/internal/gateway/usage`, { method: "POST", headers, body });
      if (response.status !== 202) throw new Error(`usage POST: ${response.status} ${await response.text()}`);
    },
  );
  const expected = BATCHES * TAILED_RECORDS;
  const deadline = Date.now() + 30_000;
  while (latencies.length < expected && Date.now() < deadline) await sleep(50);
  const counted = await totalRequests(api, accounts[0].auth, startedAt - 60_000, Date.now() + 60_000);
  const closedEarly = await Promise.race([tail.closed, sleep(0).then(() => null)]);
  tail.close();

  const sorted = [...latencies].sort((a, b) => a - b);
  const result = {
    queueWindows: "production (wrangler.toml: usage shards max_batch_timeout 55 s)",
    batches: BATCHES,
    recordsPerBatch: TAILED_RECORDS + OTHER_RECORDS,
    tailedRecords: expected,
    received: latencies.length,
    p50Ms: Math.round(percentile(sorted, 50)),
    p99Ms: Math.round(percentile(sorted, 99)),
    maxMs: Math.round(sorted.at(-1) ?? 0),
    countedByTrafficWhenReceived: counted,
    closedEarly,
    goalP99Ms: GOAL_P99_MS,
  };
  result.goalMet = result.received === expected && result.p99Ms <= GOAL_P99_MS;
  console.log(
    `| live tail: usage POST → record on the tail (production queue windows) | p50 ${result.p50Ms} ms | ` +
      `p99 ${result.p99Ms} ms | goal p99 ≤ ${GOAL_P99_MS} ms ${result.goalMet ? "met" : "**missed**"} | ` +
      `${result.received}/${expected} received; traffic had counted ${counted} of them |`,
  );
  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `tail-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`results: ${path.relative(root, file)}`);
} finally {
  child.kill("SIGTERM");
  rmSync(state, { recursive: true, force: true });
}

// `npm run bench:reports`: a traffic report of ~100 k rows and one of ~1 M rows, each in csv and parquet,
// produced by the worker (wrangler dev) into R2 and uploaded to a local S3 stand-in. Reported per run: rows, bytes,
// rows/s (the run's own started_at → completed_at, upload included) and the worker's peak memory, sampled every 50 ms
// during the run, minus its level just before, two ways: the workerd process's anonymous resident memory (heaps, the
// isolate's included, but also the local R2 simulator's and whatever the GC has not yet returned), and the worker
// isolate's own V8 heap (after a forced GC, through wrangler's inspector: bench/heap.mjs), with its ArrayBuffer
// backing stores apart. Bounded memory means the 1 M-row runs need no more than the 100 k ones.
//
// Seeding: an account per size with ceil(rows / 90) sub-users, each one usage record per day for 90 days (the
// report has one row per day and sub-user), through the gateway's usage endpoint. BENCH_REPORT_ROWS lists the
// sizes (default "100000,1000000"; the 1 M seeding takes several minutes here).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { prepare, root, startWorker } from "../scripts/lib/local-worker.mjs";
import { createSubusers, freshAccount } from "./accounts.mjs";
import { connectInspector } from "./heap.mjs";
import { apiClient, sleep } from "./http.mjs";
import {
  batchBodies,
  postBatches,
  random,
  requestId,
  rotatingUsername,
  STORE_FOLD_WAIT_MS,
  totalRequests,
  usageRecord,
  waitForAbsorbed,
} from "./usage.mjs";

const PORT = 8796;
const INSPECTOR_PORT = 9296;
const DAY = 86_400_000;
const DAYS = 90;
const SIZES = (process.env.BENCH_REPORT_ROWS ?? "100000,1000000").split(",").map(Number);
const FORMATS = ["csv", "parquet"];

/** A local S3 stand-in: accepts single PUTs and multipart uploads, counts the bytes, keeps nothing. */
function startS3Sink() {
  const received = { bytes: 0 };
  const server = createServer((request, response) => {
    request.on("data", (chunk) => {
      received.bytes += chunk.length;
    });
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://sink");
      if (request.method === "POST" && url.searchParams.has("uploads")) {
        response.end("<InitiateMultipartUploadResult><UploadId>bench</UploadId></InitiateMultipartUploadResult>");
        return;
      }
      response.setHeader("ETag", '"bench"');
      response.end(request.method === "POST" ? "<CompleteMultipartUploadResult/>" : "");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, received })),
  );
}

/** The pids of workerd processes below `pid` (wrangler starts workerd as a child). */
function workerdPids(pid) {
  const children = (p) => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const found = [];
  const walk = (p) => {
    for (const child of children(p)) {
      if (readFileSync(`/proc/${child}/comm`, "utf8").trim() === "workerd") found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

/**
 * The processes' anonymous resident memory (`RssAnon`: heaps, the isolate's included) — not `RssFile`/`RssShmem`,
 * which here also count the local R2 and SQLite files on tmpfs that the simulated storage maps.
 */
function anonBytes(pids) {
  let total = 0;
  for (const pid of pids) {
    const match = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (match) total += Number(match[1]) * 1024;
  }
  return total;
}

/** Samples the processes' anonymous resident memory until `stop()`; returns the peak. */
function samplePeak(pids) {
  let peak = anonBytes(pids);
  const timer = setInterval(() => {
    peak = Math.max(peak, anonBytes(pids));
  }, 50);
  return () => {
    clearInterval(timer);
    return Math.max(peak, anonBytes(pids));
  };
}

/** An account whose 90-day traffic report has `rows` rows (sub-users × days). */
async function seedAccount(api, tokens, rows) {
  const started = performance.now();
  const account = await freshAccount(api, tokens.adminToken, `bench-reports-${rows}`);
  const subusers = await createSubusers(api, account.auth, {
    count: Math.ceil(rows / DAYS),
    prefix: "r",
    concurrency: 12,
  });
  const rng = random(rows);
  const seededAt = Date.now();
  const today = seededAt - (seededAt % DAY);
  const records = [];
  // Oldest first, as a gateway reports: usage older than what a store has folded is patched into its folded rows.
  for (let day = DAYS - 1; day >= 0; day--) {
    for (const subuser of subusers) {
      records.push(
        usageRecord(rng, {
          requestId: requestId(`rep${rows}`, Math.floor(records.length / 1000), records.length % 1000),
          username: rotatingUsername(subuser.name),
          // Early in each UTC day (today: just after midnight, or the seeding moment if earlier).
          ts: Math.min(today - day * DAY + 60_000, seededAt - 1000),
        }),
      );
    }
  }
  await postBatches(api, tokens.gatewayToken, batchBodies(records, `bench-reports-${rows}-${seededAt}`), 8);
  await waitForAbsorbed(
    api,
    [{ auth: account.auth, from: today - (DAYS - 1) * DAY, to: seededAt + 60_000, requests: records.length }],
    {
      intervalMs: 1000,
    },
  );
  await sleep(STORE_FOLD_WAIT_MS);
  await totalRequests(api, account.auth, today - DAY, seededAt + 60_000);
  return {
    account,
    records: records.length,
    seconds: (performance.now() - started) / 1000,
    from: today - (DAYS - 1) * DAY,
  };
}

const mb = (bytes) => Math.round(bytes / 1e4) / 100;

async function runReport(api, account, format, from, workerPid, inspector) {
  const report = await api.post("/v1/reports", account.auth, {
    name: `bench ${format}`,
    type: "traffic",
    format,
    destination: { type: "s3", bucket: "bench", prefix: "", role_arn: "arn:aws:iam::000000000000:role/bench" },
  });
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);
  await sleep(2000); // let the worker settle before the baseline
  // Looked up per run: wrangler restarts workerd if it exits.
  const pids = workerdPids(workerPid);
  const baseline = anonBytes(pids);
  const stop = samplePeak(pids);
  await inspector.collectGarbage();
  const heapBaseline = await inspector.usage();
  const stopHeap = inspector.sample(50);
  const { run_id } = await api.post(`/v1/reports/${report.id}/run`, account.auth, {
    from: day(from),
    to: day(Date.now()),
  });
  let run;
  for (;;) {
    run = await api.get(`/v1/reports/runs/${run_id}`, account.auth);
    if (run.status === "completed" || run.status === "failed") break;
    await sleep(200);
  }
  const peak = stop();
  const heapPeak = await stopHeap();
  if (run.status !== "completed") throw new Error(`report run failed: ${run.error}`);
  const seconds = (Date.parse(run.completed_at) - Date.parse(run.started_at)) / 1000;
  return {
    format,
    rows: run.rows,
    mb: mb(run.bytes),
    seconds: Math.round(seconds * 100) / 100,
    rows_per_s: Math.round(run.rows / seconds),
    peak_process_memory_growth_mb: mb(peak - baseline),
    process_memory_before_mb: mb(baseline),
    peak_isolate_heap_growth_mb: mb(heapPeak.used - heapBaseline.used),
    isolate_heap_before_mb: mb(heapBaseline.used),
    peak_isolate_buffers_growth_mb: mb(heapPeak.buffers - heapBaseline.buffers),
  };
}

const sink = await startS3Sink();
const persistTo = mkdtempSync(path.join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bench-reports-"));
const vars = prepare({ persistTo });
const { child, base } = await startWorker(PORT, {
  quiet: false,
  persistTo,
  inspectorPort: INSPECTOR_PORT,
  // The seeding is a backfill of up to 1 M records in a few minutes: production's queue windows gather it into a
  // store call per window, as they would in production; delivering each message at once would rewrite a minute's
  // ever larger arrival row once per message.
  queueWindows: "production",
  vars: {
    LOG_REQUESTS: "false",
    API_ORIGIN: `http://127.0.0.1:${PORT}`,
    // No STS locally: our own keys sign for the S3 stand-in.
    STS_ENDPOINT: "",
    S3_ENDPOINT: `http://127.0.0.1:${sink.port}`,
    AWS_ACCESS_KEY_ID: "bench",
    AWS_SECRET_ACCESS_KEY: "bench",
  },
});
let inspector;
try {
  inspector = await connectInspector(INSPECTOR_PORT, () => fetch(`${base}/healthz`).then((r) => r.arrayBuffer()));
  const api = apiClient(base);
  const tokens = { adminToken: vars.ADMIN_TOKEN, gatewayToken: vars.GATEWAY_TOKEN };
  const results = [];
  for (const size of SIZES) {
    const seeded = await seedAccount(api, tokens, size);
    console.log(`seeded ${seeded.records} records for ~${size} rows in ${Math.round(seeded.seconds)} s`);
    for (const format of FORMATS) {
      const result = await runReport(api, seeded.account, format, seeded.from, child.pid, inspector);
      console.log(result);
      results.push({ target_rows: size, ...result });
    }
  }
  console.table(results);
  // Named to the second, so a second run on the same day keeps the first one's file.
  const stamp = new Date().toISOString().slice(0, 19).replaceAll(":", "-");
  const file = path.join(root, "bench", "results", `reports-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`);
  console.log(`results: ${path.relative(root, file)}`);
} finally {
  inspector?.close();
  child.kill();
  sink.server.close();
  rmSync(persistTo, { recursive: true, force: true });
}

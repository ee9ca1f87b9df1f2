import { performance } from "node:perf_hooks";
import { accountShare, type OwnedRecord } from "../../src/domain/traffic/aggregate";
import { packBatch } from "../../src/domain/traffic/message-packing";
import { readUsageMessage } from "../../src/domain/traffic/usage-messages";
import { plainlyValidBatch } from "../../src/domain/traffic/usage-records";
import type { AreaStorage } from "../../src/durable-objects/shared/storage-versions";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import type {
  MeterFigures,
  SessionSnapshot,
  Settlement,
  StorePart,
} from "../../src/durable-objects/traffic-store/contract";
import { type D1Costs, measureD1 } from "./d1";
import {
  ACCOUNTS,
  accountIdOf,
  accountPicker,
  accountShares,
  CAPPED_EVERY,
  type Mix,
  ownedRecord,
  poisson,
  RECORDS_PER_POST,
  random,
  SUBUSERS,
  sessionSnapshot,
} from "./fleet";
import { NodeSqlStorage } from "./node-sql";

/**
 * The fleet simulation behind `npm run bench:scale` (docs/scale.md). It runs the real code — the usage route's
 * check, aggregation and packing, the consumer's reading of messages, and each account's store (`AccountTraffic`:
 * rollups, request log, usage meter) on `node:sqlite` — over simulated time, and turns what it measures into the
 * load on each part of the platform and the cost per billion gateway requests.
 */

/** Published limits (docs/scale.md §0 names the sources). */
export const LIMITS = {
  queueMessagesPerSecond: 5_000,
  queueBytesPerSecond: 5_000 * 128_000,
  /** D1's one writer: ~1,000 queries/s at 1 ms each, i.e. one second of SQLite time per second. */
  d1WriterSecondsPerSecond: 1,
  d1Bytes: 10e9,
  objectRequestsPerSecond: 1_000,
  objectCpuSecondsPerSecond: 1,
  objectBytes: 10e9,
};

/** List prices in USD (Workers Paid; included amounts left out: they are noise at this scale). */
export const PRICES = {
  workerRequestsPerMillion: 0.3,
  workerCpuMsPerMillion: 0.02,
  queueOperationsPerMillion: 0.4,
  queueOperationBytes: 64 * 1024,
  objectRequestsPerMillion: 0.15,
  objectGbSecondsPerMillion: 12.5,
  objectMemoryGb: 0.128,
  objectRowsWrittenPerMillion: 1.0,
  objectRowsReadPerMillion: 0.001,
  objectStorageGbMonth: 0.2,
  d1RowsWrittenPerMillion: 1.0,
  d1StorageGbMonth: 0.75,
};

const SECONDS_PER_MONTH = 30 * 86_400;
/** A consumer batch: at most 100 messages, or what arrived within its 1-second wait. */
const CONSUMER_BATCH_MESSAGES = 100;

export interface Scenario {
  mix: Mix;
  requestsPerMinute: number;
}

export interface Options {
  /** POSTs simulated through the route and the queue. */
  posts: number;
  /** Simulated minutes per account store (the busiest accounts: `hotMinutes`). */
  minutes: number;
  hotMinutes: number;
  /** Account ranks whose stores are simulated (the others are interpolated between them). */
  sampleRanks: number[];
  /** A store sharded past this share of its CPU (the plan: sub-user-hash shards). */
  shardAbove: number;
  /** A store sharded past this many bytes. */
  shardBytes: number;
  /** Settlements timed on the D1 model per shape. */
  d1Samples: number;
}

export const FULL: Options = {
  posts: 120,
  minutes: 60,
  hotMinutes: 6,
  sampleRanks: [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000],
  shardAbove: 0.5,
  shardBytes: 5e9,
  d1Samples: 400,
};

export const SHORT: Options = {
  posts: 12,
  minutes: 2,
  hotMinutes: 0.5,
  sampleRanks: [1, 100, 10_000],
  shardAbove: 0.5,
  shardBytes: 5e9,
  d1Samples: 50,
};

/** What one POST costs the route and what it becomes on the queue. */
interface PostCost {
  routeCpuMs: number;
  messages: string[];
  parts: number;
  accounts: number;
}

/** The route and the queue: POSTs of 1,000 records drawn from the mix, checked, aggregated and packed. */
function simulateRoute(scenario: Scenario, options: Options) {
  const shares = accountShares(scenario.mix);
  const rng = random(0x5eed);
  const pick = accountPicker(shares, rng);
  const postsPerSecond = scenario.requestsPerMinute / 60 / RECORDS_PER_POST;
  const t0 = Date.UTC(2026, 10, 24, 12, 0, 0);
  const posts: PostCost[] = [];
  // At least the options' POSTs, and enough for two full consumer batches.
  const enough = () => {
    if (posts.length < options.posts) return false;
    const perPost = mean(posts.map((post) => post.messages.length));
    const batch = Math.max(1, Math.min(CONSUMER_BATCH_MESSAGES, Math.round(perPost * postsPerSecond)));
    return posts.length * perPost >= 2 * batch;
  };
  for (let p = 0; !enough(); p++) {
    const start = t0 + (p / postsPerSecond) * 1000;
    const records = Array.from({ length: RECORDS_PER_POST }, () =>
      ownedRecord(pick(), Math.floor(rng() * SUBUSERS), Math.floor(start - rng() * 2_000), rng),
    );
    const body = JSON.stringify({ batch_id: `post-${p}`, records: records.map((entry) => entry.record) });
    const begin = performance.now();
    const batch = plainlyValidBatch(JSON.parse(body));
    if (!batch) throw new Error("the simulated batch is not plainly valid");
    const byAccount = Map.groupBy(records, (entry) =>
      entry.owner.subuserId.slice(4, entry.owner.subuserId.indexOf("x")),
    );
    const shares = [...byAccount].map(([account, entries]) => accountShare(`usr_${account}`, entries));
    const messages = packBatch(`post-${p}`, shares).map((message) => message.text);
    posts.push({
      routeCpuMs: performance.now() - begin,
      messages,
      parts: shares.length,
      accounts: byAccount.size,
    });
  }
  const messagesPerPost = mean(posts.map((post) => post.messages.length));
  const messagesPerSecond = messagesPerPost * postsPerSecond;
  const batchSize = Math.max(1, Math.min(CONSUMER_BATCH_MESSAGES, Math.round(messagesPerSecond)));
  const all = posts.flatMap((post) => post.messages);
  const consumerBatches: Array<{ cpuMs: number; stores: number; gates: number }> = [];
  for (let i = 0; i + batchSize <= all.length; i += batchSize) {
    const begin = performance.now();
    const stores = new Set<string>();
    const gates = new Set<string>();
    for (const text of all.slice(i, i + batchSize)) {
      const content = readUsageMessage(JSON.parse(text));
      if (!("parts" in content)) continue;
      for (const part of content.parts) {
        stores.add(part.accountId);
        for (const gate of part.gates) gates.add(gate.gateName);
      }
    }
    consumerBatches.push({ cpuMs: performance.now() - begin, stores: stores.size, gates: gates.size });
  }
  const bytes = posts.flatMap((post) => post.messages.map((text) => Buffer.byteLength(text)));
  const queueOps = bytes.reduce((sum, b) => sum + 3 * Math.ceil(b / PRICES.queueOperationBytes), 0) / posts.length;
  return {
    postsPerSecond,
    messagesPerSecond,
    messageBytesPerSecond: (sum(bytes) / posts.length) * postsPerSecond,
    queueOpsPerSecond: queueOps * postsPerSecond,
    partsPerPost: mean(posts.map((post) => post.parts)),
    accountsPerPost: mean(posts.map((post) => post.accounts)),
    routeCpuMsPerPost: median(posts.map((post) => post.routeCpuMs)),
    consumerBatchSize: batchSize,
    consumerBatchesPerSecond: messagesPerSecond / batchSize,
    consumerCpuMsPerBatch: median(consumerBatches.map((b) => b.cpuMs)),
    storeCallsPerBatch: mean(consumerBatches.map((b) => b.stores)),
    gateCallsPerBatch: mean(consumerBatches.map((b) => b.gates)),
  };
}

type RouteResult = ReturnType<typeof simulateRoute>;

/** One account store's (or shard's) measured life at `ratePerMinute` over `minutes` simulated minutes. */
interface StoreRun {
  ratePerMinute: number;
  records: number;
  seconds: number;
  ingestCalls: number;
  alarms: number;
  settlements: number;
  /** D1 rows the settlements wrote and their SQLite time (the D1 model's figures for their shape). */
  d1Rows: number;
  d1Ms: number;
  rowsWritten: number;
  rowsByTable: Record<string, number>;
  cpuSeconds: number;
  bytes: number;
  rows: Record<string, number>;
}

/**
 * Runs one account's store: each simulated second, each consumer batch brings the account's records of its POSTs
 * (aggregated per POST, as the route does) in one ingest; the store's alarm folds and settles as in production.
 */
function simulateStore(
  rank: number,
  ratePerMinute: number,
  subusers: number,
  route: RouteResult,
  minutes: number,
  countRows: boolean,
  d1: D1Costs,
): StoreRun {
  const sql = new NodeSqlStorage();
  const traffic = new AccountTraffic(sql as unknown as AreaStorage);
  if (countRows) sql.countWrites();
  const rng = random(rank * 7919 + subusers);
  const accountId = accountIdOf(rank - 1);
  const figures: MeterFigures = {
    pools: [{ product: "residential", purchasedBytes: 1e18, usedBytes: 0, topUpCount: 1 }],
    subusers: Array.from({ length: Math.ceil(subusers / CAPPED_EVERY) }, (_, i) => ({
      subuserId: ownedRecord(rank - 1, i * CAPPED_EVERY, 0, rng).owner.subuserId,
      capBytes: 1e15,
      deletedAt: null,
    })),
    months: [],
  };
  const batchesPerSecond = Math.max(1, route.consumerBatchesPerSecond);
  const postsPerBatch = Math.max(1, route.postsPerSecond / batchesPerSecond);
  const t0 = Date.UTC(2026, 10, 24, 12, 0, 0);
  const run: StoreRun = {
    ratePerMinute,
    records: 0,
    seconds: minutes * 60,
    ingestCalls: 0,
    alarms: 0,
    settlements: 0,
    d1Rows: 0,
    d1Ms: 0,
    rowsWritten: 0,
    rowsByTable: {},
    cpuSeconds: 0,
    bytes: 0,
    rows: {},
  };
  let cpuMs = 0;
  const timed = <T>(work: () => T): T => {
    const begin = performance.now();
    const result = work();
    cpuMs += performance.now() - begin;
    return result;
  };
  const settle = (first: Settlement | null, at: number) => {
    for (let settlement = first; settlement; ) {
      run.settlements++;
      run.d1Rows += d1.settlementRows(settlement.months.length);
      run.d1Ms += d1.settlementMs(settlement.months.length);
      const pool = figures.pools[0] as MeterFigures["pools"][number];
      pool.usedBytes += settlement.pools.reduce((s, p) => s + p.bytes, 0);
      const seq = settlement.seq;
      settlement = timed(() => traffic.confirmSettlement(seq, figures, at));
    }
  };
  let post = 0;
  for (let second = 0; second < run.seconds; second++) {
    const at = t0 + second * 1000;
    for (let b = 0; b < batchesPerSecond; b++) {
      const n = poisson(ratePerMinute / 60 / batchesPerSecond, rng);
      if (n === 0) continue;
      const byPost = new Map<number, OwnedRecord[]>();
      for (let i = 0; i < n; i++) {
        const p = post + Math.floor(rng() * postsPerBatch);
        const list = byPost.get(p) ?? [];
        list.push(ownedRecord(rank - 1, Math.floor(rng() * subusers), at - Math.floor(rng() * 2_000), rng));
        byPost.set(p, list);
      }
      post += Math.ceil(postsPerBatch);
      run.records += n;
      const parts: StorePart[] = [];
      const sessions: SessionSnapshot[] = [];
      for (const [p, entries] of byPost) {
        const share = accountShare(accountId, entries);
        parts.push({ key: `post-${p}:${accountId}:0`, cells: share.cells, samples: share.samples });
        for (const { gateName, usage } of share.sessions) {
          sessions.push(sessionSnapshot(gateName, entries[0]?.owner.subuserId ?? "", usage.username, at));
        }
      }
      run.ingestCalls++;
      const outcome = timed(() => traffic.ingest({ accountId, parts, sessions }, figures, at));
      if (outcome.outcome === "applied") settle(outcome.settlement, at);
    }
    const wake = traffic.nextWake();
    if (wake !== null && wake <= at) {
      run.alarms++;
      const settleFor = timed(() => traffic.maintain(at));
      if (settleFor)
        settle(
          timed(() => traffic.settlement(at)),
          at,
        );
    }
  }
  run.cpuSeconds = cpuMs / 1000;
  if (countRows) {
    const written = sql.rowsWritten();
    run.rowsWritten = written.total;
    run.rowsByTable = written.byTable;
  }
  run.bytes = sql.bytes();
  run.rows = sql.rowCounts();
  sql.db.close();
  return run;
}

/** An account's store load per second at `rate`, from the run of a sampled account at its own rate. */
interface StoreLoad {
  requestsPerSecond: number;
  cpuSecondsPerSecond: number;
  rowsWrittenPerSecond: number;
  d1BatchesPerSecond: number;
  d1RowsPerSecond: number;
  d1WriterSecondsPerSecond: number;
  retainedBytes: number;
}

function loadOf(run: StoreRun, rate: number, subusers: number, route: RouteResult): StoreLoad {
  const perRecord = (value: number) => (run.records > 0 ? (value / run.records) * (rate / 60) : 0);
  const batchesPerSecond = Math.max(1, route.consumerBatchesPerSecond);
  // A consumer batch reaches the store when it holds at least one of its records (Poisson).
  const ingests = batchesPerSecond * (1 - Math.exp(-rate / 60 / batchesPerSecond));
  const settlementsPerSecond = Math.min(run.settlements / run.seconds, rate / 60);
  const alarmsPerSecond = Math.min(run.alarms / run.seconds, rate / 60);
  return {
    requestsPerSecond: ingests + alarmsPerSecond + settlementsPerSecond,
    cpuSecondsPerSecond: perRecord(run.cpuSeconds),
    rowsWrittenPerSecond: perRecord(run.rowsWritten),
    d1BatchesPerSecond: settlementsPerSecond,
    d1RowsPerSecond: run.settlements > 0 ? settlementsPerSecond * (run.d1Rows / run.settlements) : 0,
    d1WriterSecondsPerSecond: run.settlements > 0 ? (settlementsPerSecond * (run.d1Ms / run.settlements)) / 1000 : 0,
    retainedBytes: retainedBytes(run, rate, subusers),
  };
}

/**
 * Storage a store holds in steady state: each tier's rows per bucket as the run measured them (scaled to the
 * account's rate, at most one row per sub-user and bucket: one series each in this fleet) times the buckets the
 * tier keeps (1 min 25 h, 5 min 14 d, 1 h 91 d, 1 day 400 d; cumulative series hourly for 91 days, then daily),
 * the part keys of a day and the request log, at the run's bytes per row.
 */
function retainedBytes(run: StoreRun, rate: number, subusers: number): number {
  const minutes = run.seconds / 60;
  const scale = run.ratePerMinute > 0 ? rate / run.ratePerMinute : 0;
  const rowsOf = (table: string) => run.rows[table] ?? 0;
  const perBucket = (table: string, bucketMinutes: number) =>
    Math.min(subusers, (rowsOf(table) / Math.max(1, minutes / bucketMinutes)) * scale);
  const totalRows = Object.values(run.rows).reduce((s, n) => s + n, 0);
  const bytesPerRow = totalRows > 0 ? run.bytes / totalRows : 100;
  const cumPerHour = Math.min(subusers + 50, (rowsOf("cum") / Math.max(1, minutes / 60)) * scale);
  const keysPerMinute = (rowsOf("usage_applied") / minutes) * Math.min(1, scale);
  const rows =
    perBucket("fact_1m", 1) * 1_500 +
    perBucket("fact_5m", 5) * 4_044 +
    perBucket("fact_1h", 60) * 2_184 +
    Math.min(subusers, rate * 1_440) * 400 +
    cumPerHour * (2_184 + 309) +
    keysPerMinute * 1_440 +
    Math.min(1_000, rowsOf("request_log"));
  return rows * bytesPerRow;
}

export interface ScenarioResult {
  scenario: string;
  requestsPerMinute: number;
  route: RouteResult;
  hottest: { rank: number; shards: number; ratePerMinute: number; load: StoreLoad; run: StoreRun };
  /** D1 databases holding batch records by hash of the batch id (0: they stay in the main database). */
  batchShards: number;
  fleet: {
    objectRequestsPerSecond: number;
    objectCpuSecondsPerSecond: number;
    objectRowsWrittenPerSecond: number;
    objectBytes: number;
    gateRequestsPerSecond: number;
    d1BatchesPerSecond: number;
    d1RowsPerSecond: number;
    d1WriterSecondsPerSecond: number;
    d1Bytes: number;
    workerRequestsPerSecond: number;
    workerCpuMsPerSecond: number;
  };
  parts: Array<{ part: string; load: number; limit: number; unit: string }>;
  cost: Array<{ line: string; usdPerBillion: number }>;
  samples: Array<{ rank: number; ratePerMinute: number; rowsPerRecord: number; cpuUsPerRecord: number }>;
}

/** Runs one scenario: the route and queue, the sampled stores, the fleet's sums, the limits and the cost. */
export function simulateScenario(
  scenario: Scenario,
  options: Options,
  d1: D1Costs,
  log: (line: string) => void,
): ScenarioResult {
  const route = simulateRoute(scenario, options);
  const shares = accountShares(scenario.mix);
  const rateOf = (rank: number) => (shares[rank - 1] as number) * scenario.requestsPerMinute;
  const ranks = scenario.mix.zipf === null ? [1] : options.sampleRanks;
  const runs = new Map<number, { run: StoreRun; shards: number }>();
  for (const rank of ranks) {
    const rate = rateOf(rank);
    // The plan's sharding: a store past `shardAbove` of one CPU is split by sub-user hash into 2^k stores.
    // The plan's sharding: a store past `shardAbove` of one CPU, or past `shardBytes`, is split by sub-user hash
    // into 2^k stores.
    const probe = simulateStore(rank, rate, SUBUSERS, route, Math.min(1, options.hotMinutes), false, d1);
    const cpu = probe.cpuSeconds / probe.seconds;
    const bytes = retainedBytes(probe, rate, SUBUSERS);
    const need = Math.max(1, cpu / options.shardAbove, bytes / options.shardBytes);
    let shards = need > 1 ? 2 ** Math.ceil(Math.log2(need)) : 1;
    let run: StoreRun;
    for (;;) {
      const minutes = rate / shards > 20_000 ? options.hotMinutes : options.minutes;
      run = simulateStore(rank, rate / shards, SUBUSERS / shards, route, minutes, true, d1);
      if (retainedBytes(run, rate / shards, SUBUSERS / shards) <= options.shardBytes || shards >= 64) break;
      shards *= 2;
    }
    runs.set(rank, { run, shards });
    log(
      `  rank ${rank}: ${Math.round(rate)} req/min${shards > 1 ? ` in ${shards} shards` : ""}, ` +
        `${(run.rowsWritten / Math.max(1, run.records)).toFixed(2)} rows written and ` +
        `${((run.cpuSeconds / Math.max(1, run.records)) * 1e6).toFixed(1)} µs per record`,
    );
  }
  // Every account is represented by the nearest sampled rank (on a log scale), scaled to its own rate.
  let objectRequests = 0;
  let objectCpu = 0;
  let objectRows = 0;
  let objectBytes = 0;
  let d1Batches = 0;
  let d1Rows = 0;
  let d1Writer = 0;
  for (let rank = 1; rank <= ACCOUNTS; rank++) {
    const sample = ranks.reduce((best, r) =>
      Math.abs(Math.log(r / rank)) < Math.abs(Math.log(best / rank)) ? r : best,
    );
    const { run, shards } = runs.get(sample) as { run: StoreRun; shards: number };
    const load = loadOf(run, rateOf(rank) / shards, SUBUSERS / shards, route);
    objectRequests += load.requestsPerSecond * shards;
    objectCpu += load.cpuSecondsPerSecond * shards;
    objectRows += load.rowsWrittenPerSecond * shards;
    objectBytes += load.retainedBytes * shards;
    d1Batches += load.d1BatchesPerSecond * shards;
    d1Rows += load.d1RowsPerSecond * shards;
    d1Writer += load.d1WriterSecondsPerSecond * shards;
  }
  const top = runs.get(1) as { run: StoreRun; shards: number };
  const topRate = rateOf(1) / top.shards;
  const hotLoad = loadOf(top.run, topRate, SUBUSERS / top.shards, route);
  // The busiest store's CPU without the row-counting triggers.
  hotLoad.cpuSecondsPerSecond = (() => {
    const plain = simulateStore(1, topRate, SUBUSERS / top.shards, route, options.hotMinutes, false, d1);
    return (plain.cpuSeconds / Math.max(1, plain.records)) * (topRate / 60);
  })();
  const recordsPerSecond = scenario.requestsPerMinute / 60;
  // Sessions: one gate call per gate with session usage per consumer batch (the sessions it returns reach the
  // account's session index within the store's own ingest).
  const gateRequests = route.gateCallsPerBatch * route.consumerBatchesPerSecond;
  objectRequests += gateRequests;
  const usageBatchRows = 4 * route.postsPerSecond; // insert (+ primary-key and time indexes), pruned after 7 days
  d1Rows += usageBatchRows;
  d1Writer += (route.postsPerSecond * d1.batchRecordMs) / 1000;
  // D1 keeps 7 days of batch records (~120 bytes each) and a year of capped sub-users' months (~100 bytes each).
  // Past half a database, the plan moves batch records to databases of their own by hash of the batch id.
  const batchBytes = route.postsPerSecond * 7 * 86_400 * 120;
  const accountBytes = ACCOUNTS * (SUBUSERS / CAPPED_EVERY) * 12 * 100;
  const batchShards = accountBytes + batchBytes <= options.shardBytes ? 0 : Math.ceil(batchBytes / options.shardBytes);
  const d1Bytes = accountBytes + batchBytes;
  const largestD1 = batchShards === 0 ? d1Bytes : Math.max(accountBytes, batchBytes / batchShards);
  const workerRequests = route.postsPerSecond + route.consumerBatchesPerSecond;
  const workerCpuMs =
    route.routeCpuMsPerPost * route.postsPerSecond + route.consumerCpuMsPerBatch * route.consumerBatchesPerSecond;
  const fleet = {
    objectRequestsPerSecond: objectRequests,
    objectCpuSecondsPerSecond: objectCpu,
    objectRowsWrittenPerSecond: objectRows,
    objectBytes,
    gateRequestsPerSecond: gateRequests,
    d1BatchesPerSecond: d1Batches,
    d1RowsPerSecond: d1Rows,
    d1WriterSecondsPerSecond: d1Writer,
    d1Bytes,
    workerRequestsPerSecond: workerRequests,
    workerCpuMsPerSecond: workerCpuMs,
  };
  // A gate hears of its sessions' usage at most once per consumer batch.
  const hottestGate = (route.gateCallsPerBatch > 0 ? 1 : 0) * route.consumerBatchesPerSecond;
  const parts = [
    { part: "queue messages/s", load: route.messagesPerSecond, limit: LIMITS.queueMessagesPerSecond, unit: "msg/s" },
    { part: "queue bytes/s", load: route.messageBytesPerSecond, limit: LIMITS.queueBytesPerSecond, unit: "B/s" },
    { part: "D1 write batches/s", load: d1Batches + route.postsPerSecond, limit: 1_000, unit: "batch/s" },
    { part: "D1 writer time", load: d1Writer, limit: LIMITS.d1WriterSecondsPerSecond, unit: "s/s" },
    { part: "largest D1 database (a year)", load: largestD1, limit: LIMITS.d1Bytes, unit: "B" },
    {
      part: "hottest store requests/s",
      load: hotLoad.requestsPerSecond,
      limit: LIMITS.objectRequestsPerSecond,
      unit: "req/s",
    },
    {
      part: "hottest store CPU-s/s",
      load: hotLoad.cpuSecondsPerSecond,
      limit: LIMITS.objectCpuSecondsPerSecond,
      unit: "s/s",
    },
    { part: "hottest store storage", load: hotLoad.retainedBytes, limit: LIMITS.objectBytes, unit: "B" },
    { part: "hottest gate requests/s", load: hottestGate, limit: LIMITS.objectRequestsPerSecond, unit: "req/s" },
  ];
  const perBillion = (usdPerSecond: number) => (usdPerSecond / recordsPerSecond) * 1e9;
  const objectGbSeconds = (objectCpu + gateRequests * 0.001) * PRICES.objectMemoryGb;
  const cost = [
    { line: "Worker requests", usd: (workerRequests * PRICES.workerRequestsPerMillion) / 1e6 },
    { line: "Worker CPU-ms", usd: (workerCpuMs * PRICES.workerCpuMsPerMillion) / 1e6 },
    { line: "queue operations", usd: (route.queueOpsPerSecond * PRICES.queueOperationsPerMillion) / 1e6 },
    { line: "DO requests", usd: (objectRequests * PRICES.objectRequestsPerMillion) / 1e6 },
    { line: "DO duration", usd: (objectGbSeconds * PRICES.objectGbSecondsPerMillion) / 1e6 },
    { line: "DO rows written", usd: (objectRows * PRICES.objectRowsWrittenPerMillion) / 1e6 },
    { line: "D1 rows written", usd: (d1Rows * PRICES.d1RowsWrittenPerMillion) / 1e6 },
    {
      line: "storage (DO + D1)",
      usd:
        ((objectBytes / 1e9) * PRICES.objectStorageGbMonth + (d1Bytes / 1e9) * PRICES.d1StorageGbMonth) /
        SECONDS_PER_MONTH,
    },
  ].map(({ line, usd }) => ({ line, usdPerBillion: perBillion(usd) }));
  return {
    scenario: scenario.mix.name,
    requestsPerMinute: scenario.requestsPerMinute,
    route,
    hottest: { rank: 1, shards: top.shards, ratePerMinute: rateOf(1), load: hotLoad, run: top.run },
    batchShards,
    fleet,
    parts,
    cost,
    samples: ranks.map((rank) => {
      const { run } = runs.get(rank) as { run: StoreRun };
      return {
        rank,
        ratePerMinute: rateOf(rank),
        rowsPerRecord: run.rowsWritten / Math.max(1, run.records),
        rowsPerRecordByTable: Object.fromEntries(
          Object.entries(run.rowsByTable).map(([table, rows]) => [table, rows / Math.max(1, run.records)]),
        ),
        cpuUsPerRecord: (run.cpuSeconds / Math.max(1, run.records)) * 1e6,
      };
    }),
  };
}

function sum(values: number[]): number {
  return values.reduce((s, v) => s + v, 0);
}

function mean(values: number[]): number {
  return values.length > 0 ? sum(values) / values.length : 0;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

export { MIXES } from "./fleet";
export { measureD1 };

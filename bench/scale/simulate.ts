import { performance } from "node:perf_hooks";
import { gunzipSync } from "node:zlib";
import { accountShare, type OwnedRecord } from "../../src/domain/traffic/aggregate";
import { readUsageMessage } from "../../src/domain/traffic/usage-messages";
import type { AreaStorage } from "../../src/durable-objects/shared/storage-versions";
import { AccountTraffic } from "../../src/durable-objects/traffic-store/account-traffic";
import { unpackJson } from "../../src/durable-objects/traffic-store/blob-codec";
import type { MeterFigures, Settlement, StorePart } from "../../src/durable-objects/traffic-store/contract";
import { SpikeWatch } from "../../src/durable-objects/traffic-store/spike-watch";
import type { Marginals } from "../../src/durable-objects/traffic-store/summary";
import { ownerTag } from "../../src/platform/owner-tag";
import { routeUsage } from "../../src/queues/usage";
import type { D1Costs } from "./d1";
import {
  ACCOUNTS,
  accountIdOf,
  accountOfSubuser,
  accountPicker,
  accountShares,
  CAPPED_EVERY,
  type Mix,
  ownedRecord,
  poisson,
  random,
  SUBUSERS,
} from "./fleet";
import { NodeSqlStorage } from "./node-sql";
import { LIMITS, objectGbSeconds, PRICES, queueOperations } from "./platform";
import { SIM_SEALING_KEY, usageRoute } from "./usage-route";

/**
 * The fleet simulation behind `npm run bench:scale` (docs/scale.md). It runs the real code — the usage route's
 * check, aggregation and packing, the first queue's forwarding to the accounts' shards, the shard consumer's reading
 * of messages, and each account's store (`AccountTraffic`) on `node:sqlite` — over simulated time, and turns what it
 * measures into the load on each part of the platform and the cost per billion gateway requests.
 */

/**
 * The queues as configured in production (wrangler.toml, docs/deploy.md): the `usage` queue's batches (100
 * messages or 5 s), the accounts' shard queues and their batch window.
 */
export const QUEUES = { shards: 16, routeWindowSeconds: 5, shardWindowSeconds: 55, batchMessages: 100 };
/** The gateway reports a request within about a second; a settlement past a threshold reaches the gates this soon. */
const GATEWAY_FLUSH_SECONDS = 1;
const REFUSAL_LATENCY_SECONDS = 0.2;
const SECONDS_PER_MONTH = 30 * 86_400;

export interface Scenario {
  mix: Mix;
  requestsPerMinute: number;
  /** Records per gateway POST: 1,000 (a full batch), 500 (the local gateway's flush), 100 (a fleet of many nodes). */
  recordsPerPost: number;
}

export interface Options {
  /** The project's folder (its migrations). */
  root: string;
  /** POSTs simulated through the route and the first queue. */
  posts: number;
  /** Simulated minutes per account store; `hotMinutes` for the busiest store's CPU at its full rate. */
  minutes: number;
  hotMinutes: number;
  /** Account ranks whose stores are simulated (the others are represented by the nearest, scaled). */
  sampleRanks: number[];
  /** A store sharded past this share of its CPU (sub-user-hash shards, `accounts.traffic_shards`). */
  shardAbove: number;
  /** A store sharded past this many bytes. */
  shardBytes: number;
  /** Settlements timed on the D1 model per shape. */
  d1Samples: number;
  /** Records an ingest brings at most in the row-counting runs (a busier one brings this many, weighted). */
  recordsPerIngest: number;
}

export const FULL: Omit<Options, "root"> = {
  posts: 160,
  minutes: 60,
  hotMinutes: 2,
  sampleRanks: [1, 2, 3, 10, 100, 1_000, 10_000],
  shardAbove: 0.5,
  shardBytes: 5e9,
  d1Samples: 400,
  recordsPerIngest: 10_000,
};

export const SHORT: Omit<Options, "root"> = {
  posts: 24,
  minutes: 40,
  hotMinutes: 0.5,
  sampleRanks: [1, 100, 10_000],
  shardAbove: 0.5,
  shardBytes: 5e9,
  d1Samples: 50,
  recordsPerIngest: 2_000,
};

/**
 * The route and the two queues: POSTs of `recordsPerPost` records drawn from the mix, aggregated and packed as the
 * route does, then the `usage` queue's real consumer (`routeUsage`) forwarding each batch of them to the shard queues.
 */
async function simulateQueues(scenario: Scenario, options: Options) {
  const { recordsPerPost } = scenario;
  const shares = accountShares(scenario.mix);
  const rng = random(0x5eed);
  const pick = accountPicker(shares, rng);
  const postsPerSecond = scenario.requestsPerMinute / 60 / recordsPerPost;
  const t0 = Date.UTC(2026, 10, 24, 12, 0, 0);
  const routeMessages: Array<{ gzipped: Buffer; at: number }> = [];
  const routeCpu: number[] = [];
  // At least the options' POSTs (their records, at 1,000 a POST), and enough for two of the `usage` consumer's batches.
  const enough = (p: number) => {
    if (p * recordsPerPost < options.posts * 1_000) return false;
    const perSecond = (routeMessages.length / p) * postsPerSecond;
    const batch = Math.max(1, Math.min(QUEUES.batchMessages, Math.round(perSecond * QUEUES.routeWindowSeconds)));
    return routeMessages.length >= 2 * batch;
  };
  const route = usageRoute(options.root, (body) => routeMessages.push({ gzipped: Buffer.from(body), at: clock }));
  let clock = t0;
  let p = 0;
  for (; !enough(p); p++) {
    clock = t0 + (p / postsPerSecond) * 1000;
    const start = clock;
    const records = Array.from({ length: recordsPerPost }, () =>
      ownedRecord(pick(), Math.floor(rng() * SUBUSERS), Math.floor(start - rng() * 2_000), rng),
    );
    for (const entry of records) entry.record.owner_tag = await ownerTagOf(entry.owner);
    route.knowOwners(records.map((entry) => ({ ...entry.owner, accountId: accountOfSubuser(entry.owner.subuserId) })));
    const body = JSON.stringify({ batch_id: `post-${p}`, records: records.map((entry) => entry.record) });
    routeCpu.push(await route.post(body, start));
  }
  const posts = p;
  const routeMessagesPerPost = routeMessages.length / posts;
  const routeMessagesPerSecond = routeMessagesPerPost * postsPerSecond;
  // The `usage` queue's consumer: batches of 100 messages, or what arrived within its window.
  const routeBatch = Math.max(
    1,
    Math.min(QUEUES.batchMessages, Math.round(routeMessagesPerSecond * QUEUES.routeWindowSeconds)),
  );
  const forwardCpu: number[] = [];
  const shardMessages: Buffer[] = [];
  const env = shardQueuesEnv((body) => shardMessages.push(Buffer.from(body)));
  for (let i = 0; i + routeBatch <= routeMessages.length; i += routeBatch) {
    const batch = messageBatch(routeMessages.slice(i, i + routeBatch));
    const begin = performance.now();
    await routeUsage(batch, env);
    forwardCpu.push(performance.now() - begin);
    if (batch.acked() !== batch.messages.length) throw new Error("the forwarder did not acknowledge every message");
  }
  const routeBatchesPerSecond = routeMessagesPerSecond / routeBatch;
  const forwardBatches = Math.max(1, forwardCpu.length);
  const shardMessagesPerSecond = (shardMessages.length / forwardBatches) * routeBatchesPerSecond;
  // The shard consumers: reading a message (gunzip, parse) timed on the messages made.
  const readBegin = performance.now();
  for (const message of shardMessages) readUsageMessage(JSON.parse(gunzipSync(message).toString()));
  const readMsPerMessage = (performance.now() - readBegin) / Math.max(1, shardMessages.length);
  const perShard = shardMessagesPerSecond / QUEUES.shards;
  const shardBatch = Math.max(1, Math.min(QUEUES.batchMessages, perShard * QUEUES.shardWindowSeconds));
  const shardBatchesPerSecond = perShard / shardBatch;
  const routeBytes = routeMessages.map((m) => m.gzipped.byteLength);
  const shardBytes = shardMessages.map((m) => m.byteLength);
  return {
    postsPerSecond,
    routeMessagesPerSecond,
    routeBytesPerSecond: (sum(routeBytes) / posts) * postsPerSecond,
    shardMessagesPerSecond,
    shardBytesPerSecond: mean(shardBytes) * shardMessagesPerSecond,
    queueOpsPerSecond:
      mean(routeBytes.map(queueOperations)) * routeMessagesPerSecond +
      mean(shardBytes.map(queueOperations)) * shardMessagesPerSecond,
    routeCpuMsPerPost: median(routeCpu),
    /**
     * Per POST: the owners' D1 lookup (rows read; SQLite ms on the primary, for names a replica lacks, and on a read
     * replica) and the batch ledger (calls, rows, CPU).
     */
    ownerRowsReadPerPost: (route.d1.rowsRead + route.d1.replica.rowsRead) / posts,
    ownerLookupMsPerPost: route.d1.sqliteMs / posts,
    ownerReplicaMsPerPost: route.d1.replica.sqliteMs / posts,
    idleTail: await route.idleTailRead(200, clock),
    ledger: route.ledger(posts),
    routeBatchesPerSecond,
    forwardCpuMsPerBatch: median(forwardCpu),
    /** Messages of one shard queue per second (the hash spreads accounts evenly), and its batches. */
    shardMessagesPerShardPerSecond: perShard,
    shardBatchesPerShardPerSecond: shardBatchesPerSecond,
    shardBatchesPerSecond: shardBatchesPerSecond * QUEUES.shards,
    shardReadMsPerBatch: readMsPerMessage * shardBatch,
    /** How long a record waits from its request to its store, at most (flush, the first queue, a shard's window). */
    worstDelaySeconds:
      GATEWAY_FLUSH_SECONDS +
      Math.min(QUEUES.routeWindowSeconds, routeBatch / routeMessagesPerSecond) +
      Math.min(QUEUES.shardWindowSeconds, shardBatch / Math.max(perShard, 1e-9)),
    /** Gzipped bytes a record takes in the shard queues' messages, and their messages' mean size. */
    gzippedBytesPerRecord:
      sum(shardBytes) / Math.max(1, (forwardCpu.length * routeBatch * recordsPerPost) / routeMessagesPerPost),
    shardMessageBytes: Math.max(1, mean(shardBytes)),
  };
}

type QueueResult = Awaited<ReturnType<typeof simulateQueues>>;

/** The shard queues as the forwarder finds them bound (`USAGE_ACCOUNTS_<n>`), each message's body to `sent`. */
function shardQueuesEnv(sent: (body: Uint8Array) => void): Cloudflare.Env {
  const queue = {
    sendBatch: async (messages: Array<{ body: Uint8Array }>) => {
      for (const message of messages) sent(message.body);
    },
    send: async (body: Uint8Array) => sent(body),
  };
  const bindings = Object.fromEntries(Array.from({ length: QUEUES.shards }, (_, n) => [`USAGE_ACCOUNTS_${n}`, queue]));
  return { ...bindings, DB: {} } as unknown as Cloudflare.Env;
}

/** A queue consumer's batch of the route's messages, counting acknowledgements. */
function messageBatch(messages: Array<{ gzipped: Buffer; at: number }>) {
  let acked = 0;
  return {
    queue: "usage",
    messages: messages.map(({ gzipped, at }, i) => ({
      id: `m${i}`,
      timestamp: new Date(at),
      attempts: 1,
      body: new Uint8Array(gzipped),
      ack: () => {
        acked++;
      },
      retry: () => {},
    })),
    ackAll: () => {},
    retryAll: () => {},
    acked: () => acked,
  } as unknown as MessageBatch<unknown> & { acked(): number };
}

/**
 * How often an account's store is called: a shard consumer's batch calls it when the batch holds one of its parts.
 * Its parts come with the POSTs holding one of its records; its shard's batches are the shard's common ones, or
 * more when its own messages fill them sooner.
 */
function ingestsPerSecond(rate: number, queues: QueueResult): number {
  const records = rate / 60;
  const partsPerSecond = queues.postsPerSecond * (1 - Math.exp(-records / queues.postsPerSecond));
  const ownMessages = (records * queues.gzippedBytesPerRecord) / queues.shardMessageBytes;
  const shardMessages = queues.shardMessagesPerShardPerSecond + ownMessages;
  const batches = Math.max(shardMessages / QUEUES.batchMessages, 1 / QUEUES.shardWindowSeconds);
  return batches * (1 - Math.exp(-partsPerSecond / batches));
}

/** One account's store (or shard) simulated at `ratePerMinute` over `minutes` simulated minutes. */
interface StoreRun {
  ratePerMinute: number;
  records: number;
  minutes: number;
  /** Minutes in which the store took usage (rows are billed per active account-minute). */
  activeMinutes: number;
  ingests: number;
  alarms: number;
  settlements: number;
  d1Rows: number;
  d1Ms: number;
  rowsWritten: number;
  rowsRead: number;
  rowsByTable: Record<string, number>;
  cpuSeconds: number;
  /** The part of the store's CPU spent judging sub-users for spikes (`SpikeWatch.judge`, as buckets fold). */
  detectionCpuSeconds: number;
  /** Bytes per row kind, as stored (for the retention model). */
  rowBytes: Record<string, number>;
  rowCounts: Record<string, number>;
  /** The cap and the pool set to run out mid-run: seconds of traffic before the gates refuse, and bytes past. */
  refusals: Array<{ kind: "cap" | "pool"; seconds: number; bytesPast: number }>;
}

/**
 * Runs one account's store: records arrive per simulated second; each ingest (at the account's cadence) brings the
 * records delivered since, one part per POST they came in (aggregated as the route does); the store's alarm folds
 * and settles as in production, settlements go to the D1 model. A capped sub-user and the pool are sized to run
 * out half-way, and the moment the gates would refuse is recorded.
 */
function simulateStore(
  rank: number,
  ratePerMinute: number,
  subusers: number,
  queues: QueueResult,
  minutes: number,
  options: { countRows: boolean; recordsPerIngest: number },
  d1: D1Costs,
): StoreRun {
  const sql = new NodeSqlStorage();
  const traffic = new AccountTraffic(sql as unknown as AreaStorage);
  const rng = random(rank * 7919 + subusers);
  const accountId = accountIdOf(rank - 1);
  const seconds = Math.round(minutes * 60);
  const meanBytes = 103_000;
  const capped = ownedRecord(rank - 1, 0, 0, rng).owner.subuserId;
  const cappedBytes = Math.max(1, ((ratePerMinute * minutes) / subusers) * meanBytes * 0.5);
  const poolBytes = Math.max(1, ratePerMinute * minutes * meanBytes * 0.5);
  const figures: MeterFigures = {
    pools: [{ product: "residential", purchasedBytes: poolBytes, usedBytes: 0, topUpCount: 1 }],
    subusers: Array.from({ length: Math.ceil(subusers / CAPPED_EVERY) }, (_, i) => ({
      subuserId: ownedRecord(rank - 1, i * CAPPED_EVERY, 0, rng).owner.subuserId,
      caps: { month: i === 0 ? cappedBytes : 1e15, day: null, lifetime: null },
      deletedAt: null,
    })),
    months: [],
  };
  const t0 = Date.UTC(2026, 10, 24, 12, 0, 0);
  const run: StoreRun = {
    ratePerMinute,
    records: 0,
    minutes,
    activeMinutes: 0,
    ingests: 0,
    alarms: 0,
    settlements: 0,
    d1Rows: 0,
    d1Ms: 0,
    rowsWritten: 0,
    rowsRead: 0,
    rowsByTable: {},
    cpuSeconds: 0,
    detectionCpuSeconds: 0,
    rowBytes: {},
    rowCounts: {},
    refusals: [],
  };
  let cpuMs = 0;
  const detectionBefore = detection.ms;
  const timed = <T>(work: () => T): T => {
    const begin = performance.now();
    const result = work();
    cpuMs += performance.now() - begin;
    return result;
  };
  // When the cap and the pool run out (the record that passes them), and when their refusal reaches the gates.
  const crossing = { cap: { used: 0, at: null as number | null }, pool: { used: 0, at: null as number | null } };
  const refusedAt: { cap: number | null; pool: number | null } = { cap: null, pool: null };
  /** Usage after each limit was passed: [time (s), bytes]. */
  const past: { cap: Array<[number, number]>; pool: Array<[number, number]> } = { cap: [], pool: [] };
  const d1Pool = figures.pools[0] as MeterFigures["pools"][number];
  const d1Months = new Map<string, number>();
  const settle = (first: Settlement | null, at: number) => {
    for (let settlement = first; settlement; ) {
      run.settlements++;
      run.d1Rows += d1.settlementRows(settlement.months.length);
      run.d1Ms += d1.settlementMs(settlement.months.length);
      d1Pool.usedBytes += settlement.pools.reduce((s, p) => s + p.bytes, 0);
      for (const month of settlement.months) d1Months.set(month.subuserId, month.usedBytes);
      if (refusedAt.pool === null && d1Pool.usedBytes >= poolBytes)
        refusedAt.pool = at / 1000 + REFUSAL_LATENCY_SECONDS;
      if (refusedAt.cap === null && (d1Months.get(capped) ?? 0) >= cappedBytes) {
        refusedAt.cap = at / 1000 + REFUSAL_LATENCY_SECONDS;
      }
      const seq = settlement.seq;
      const answer: MeterFigures = {
        pools: [d1Pool],
        subusers: [],
        months: [...d1Months].map(([subuserId, usedBytes]) => ({ subuserId, month: "2026-11", usedBytes })),
      };
      settlement = timed(() => traffic.confirmSettlement(seq, answer, at));
    }
  };
  // Steady state: the meter started and every sub-user's client block known hours before (a first sight is rare).
  const warmAt = t0 - 3 * 3_600_000;
  const warm = Array.from({ length: subusers }, (_, u) => {
    const entry = ownedRecord(rank - 1, u, warmAt, rng);
    return { ...entry, record: { ...entry.record, bytes_in: 0, bytes_out: 0 } };
  });
  const warmShare = accountShare(accountId, warm);
  traffic.ingest(
    { accountId, parts: [{ key: `warm:${accountId}`, receivedAt: warmAt, ...warmShare, sessions: [] }] },
    figures,
    warmAt,
  );
  traffic.maintain(t0 - 60_000);
  if (options.countRows) sql.countWrites();
  const ingestEvery = 1 / Math.max(1e-9, ingestsPerSecond(ratePerMinute, queues));
  // A busy account is simulated with fewer, heavier records: at most `recordsPerIngest` an ingest, each standing for
  // `weight` requests' bytes (enough for every sub-user's cells, so the rows and their sizes are those of the
  // full traffic; the CPU per record comes from a run at the full rate).
  const weight = Math.max(1, ((ratePerMinute / 60) * ingestEvery) / options.recordsPerIngest);
  const delay =
    GATEWAY_FLUSH_SECONDS + Math.min(QUEUES.routeWindowSeconds, 1 / Math.max(queues.routeBatchesPerSecond, 1e-9));
  let nextIngest = rng() * ingestEvery;
  const waiting: OwnedRecord[] = [];
  const activeMinutes = new Set<number>();
  for (let second = 0; second < seconds; second++) {
    const at = t0 + second * 1000;
    const n = poisson(ratePerMinute / 60 / weight, rng);
    for (let i = 0; i < n; i++) {
      const entry = ownedRecord(rank - 1, Math.floor(rng() * subusers), at + Math.floor(rng() * 1000), rng);
      if (weight > 1) {
        entry.record.bytes_in = Math.round(entry.record.bytes_in * weight);
        entry.record.bytes_out = Math.round(entry.record.bytes_out * weight);
      }
      waiting.push(entry);
    }
    run.records += n * weight;
    if (second + 1 >= nextIngest) {
      nextIngest += ingestEvery;
      const cutoff = at - delay * 1000;
      const due = waiting.filter((entry) => entry.ts <= cutoff);
      if (due.length > 0) {
        waiting.splice(0, waiting.length, ...waiting.filter((entry) => entry.ts > cutoff));
        const delivered = due.sort((a, b) => a.ts - b.ts);
        for (const entry of delivered) {
          const bytes = entry.record.bytes_in + entry.record.bytes_out;
          for (const kind of ["cap", "pool"] as const) {
            if (kind === "cap" && entry.owner.subuserId !== capped) continue;
            const state = crossing[kind];
            state.used += bytes;
            if (state.at === null && state.used >= (kind === "cap" ? cappedBytes : poolBytes))
              state.at = entry.ts / 1000;
            else if (state.at !== null) past[kind].push([entry.ts / 1000, bytes]);
          }
        }
        const byPost = Map.groupBy(delivered, (entry) => Math.floor((entry.ts / 1000) * queues.postsPerSecond));
        const parts: StorePart[] = [...byPost].map(([post, entries]) => {
          const share = accountShare(accountId, entries);
          return {
            key: `post-${post}:${accountId}:0`,
            receivedAt: (post / queues.postsPerSecond) * 1000,
            cells: share.cells,
            domains: share.domains,
            sources: share.sources,
            samples: share.samples,
            sessions: share.sessionDeltas,
          };
        });
        run.ingests++;
        activeMinutes.add(Math.floor(second / 60));
        const outcome = timed(() => traffic.ingest({ accountId, parts }, figures, at));
        if (outcome.outcome === "applied") settle(outcome.settlement, at);
      }
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
  run.activeMinutes = activeMinutes.size;
  run.cpuSeconds = cpuMs / 1000;
  run.detectionCpuSeconds = (detection.ms - detectionBefore) / 1000;
  for (const kind of ["cap", "pool"] as const) {
    const from = crossing[kind].at;
    const until = refusedAt[kind];
    if (from !== null && until !== null) {
      const bytesPast = past[kind].reduce((sum, [ts, bytes]) => (ts < until ? sum + bytes : sum), 0);
      run.refusals.push({ kind, seconds: Math.max(0, until - from), bytesPast });
    }
  }
  if (options.countRows) {
    const written = sql.rowsWritten();
    run.rowsWritten = written.total;
    run.rowsRead = sql.rowsRead();
    run.rowsByTable = written.byTable;
  }
  run.rowCounts = sql.rowCounts();
  run.rowBytes = measureRows(sql);
  sql.db.close();
  return run;
}

/**
 * Bytes as the store keeps them: per cell of a folded bucket (its compressed body over its cells), an arrival row's
 * bytes besides its cells, and per value of the cumulative series.
 */
function measureRows(sql: NodeSqlStorage): Record<string, number> {
  const bodies = sql.db.prepare("SELECT body FROM bucket_5m").all() as Array<{ body: Uint8Array }>;
  const cells = bodies.reduce(
    (n, row) => n + unpackJson<{ cells: unknown[] }>(row.body, { cells: [] }).cells.length,
    0,
  );
  const cell = cells > 0 ? bodies.reduce((n, row) => n + row.body.byteLength, 0) / cells : 60;
  const arrivals = sql.db
    .prepare(
      `SELECT avg(length(totals) + length(metered) + length(keys) + coalesce(length(sessions), 0) +
         coalesce(length(samples), 0) + coalesce(length(sources), 0)) AS extra, count(*) AS n FROM arrivals`,
    )
    .get() as { extra: number | null; n: number };
  const cums = sql.db.prepare("SELECT cum FROM bucket_1h").all() as Array<{ cum: Uint8Array }>;
  let values = 0;
  for (const row of cums) {
    for (const dimensions of Object.values(unpackJson<Marginals>(row.cum, {}))) {
      for (const byValue of Object.values(dimensions ?? {})) values += Object.keys(byValue ?? {}).length;
    }
  }
  const seriesValue = values > 0 ? cums.reduce((n, row) => n + row.cum.byteLength, 0) / values : 14;
  return { cell, arrivalOverhead: (arrivals.extra ?? 400) + 100, seriesValue, largestRow: largestRow(sql) };
}

/** The largest row of the store's tables, in bytes (every column's length added up). */
function largestRow(sql: NodeSqlStorage): number {
  const tables = sql.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>;
  let largest = 0;
  for (const { name } of tables) {
    const columns = sql.db.prepare(`SELECT name FROM pragma_table_info('${name}')`).all() as Array<{ name: string }>;
    const size = columns.map((column) => `coalesce(length("${column.name}"), 0)`).join(" + ");
    const row = sql.db.prepare(`SELECT max(${size}) AS bytes FROM "${name}"`).get() as { bytes: number | null };
    largest = Math.max(largest, row.bytes ?? 0);
  }
  return largest;
}

/** Time spent in `SpikeWatch.judge` by every store the simulation runs (each run reads its own share). */
const detection = { ms: 0 };
const judgeBuckets = SpikeWatch.prototype.judge;
SpikeWatch.prototype.judge = function timedJudge(this: SpikeWatch, ...args: Parameters<SpikeWatch["judge"]>) {
  const begin = performance.now();
  try {
    judgeBuckets.apply(this, args);
  } finally {
    detection.ms += performance.now() - begin;
  }
};

/** An account's store load per second at `rate`, from the run of a sampled account at its own rate. */
interface StoreLoad {
  requestsPerSecond: number;
  cpuSecondsPerSecond: number;
  /** Spike detection's share of the above: CPU and rows, which follow active minutes (a step per folded bucket). */
  detectionCpuSecondsPerSecond: number;
  detectionRowsPerSecond: number;
  rowsWrittenPerSecond: number;
  d1BatchesPerSecond: number;
  d1RowsPerSecond: number;
  d1WriterSecondsPerSecond: number;
  retainedBytes: number;
}

/**
 * Rows follow ingests and active minutes, not records: the sample's rows per ingest (the arrival row) and per active
 * minute (folds, the meter, sources) are scaled to the account's own ingests and active minutes; CPU follows records.
 */
function loadOf(run: StoreRun, rate: number, subusers: number, queues: QueueResult): StoreLoad {
  const ingests = ingestsPerSecond(rate, queues);
  const activeMinutesPerSecond = (1 - Math.exp(-rate)) / 60;
  const arrivalRows = run.rowsByTable.arrivals ?? 0;
  const otherRows = run.rowsWritten - arrivalRows;
  const perIngest = run.ingests > 0 ? arrivalRows / run.ingests : 1;
  const perActiveMinute = run.activeMinutes > 0 ? otherRows / run.activeMinutes : 0;
  const perRunSecond = (value: number) => value / (run.minutes * 60);
  const sampleActiveMinutesPerSecond = perRunSecond(run.activeMinutes);
  const scaleMinutes = sampleActiveMinutesPerSecond > 0 ? activeMinutesPerSecond / sampleActiveMinutesPerSecond : 0;
  const settlementsPerSecond = perRunSecond(run.settlements) * scaleMinutes;
  return {
    requestsPerSecond: ingests + perRunSecond(run.alarms) * scaleMinutes + settlementsPerSecond,
    cpuSecondsPerSecond: run.records > 0 ? (run.cpuSeconds / run.records) * (rate / 60) : 0,
    detectionCpuSecondsPerSecond:
      run.activeMinutes > 0 ? (run.detectionCpuSeconds / run.activeMinutes) * activeMinutesPerSecond : 0,
    detectionRowsPerSecond:
      run.activeMinutes > 0 ? ((run.rowsByTable.spike_watch ?? 0) / run.activeMinutes) * activeMinutesPerSecond : 0,
    rowsWrittenPerSecond: perIngest * ingests + perActiveMinute * activeMinutesPerSecond,
    d1BatchesPerSecond: settlementsPerSecond,
    d1RowsPerSecond: run.settlements > 0 ? settlementsPerSecond * (run.d1Rows / run.settlements) : 0,
    d1WriterSecondsPerSecond: run.settlements > 0 ? (settlementsPerSecond * (run.d1Ms / run.settlements)) / 1000 : 0,
    retainedBytes: retainedBytes(run, rate, subusers, ingests),
  };
}

/**
 * Storage a store holds in steady state, at the bytes per row and per cell the run measured: arrival rows for 25
 * hours (one per minute with an ingest), 5-minute rows for 14 days, hours for 92 and days for 401 (one per bucket
 * with usage), each holding the cells of its bucket — one per active sub-user (one region and ASN each here) — and
 * hours and days their cumulative series (a value per sub-user, region, ASN, tag and IP ever seen).
 */
function retainedBytes(run: StoreRun, rate: number, subusers: number, ingests: number): number {
  const cellBytes = run.rowBytes.cell ?? 60;
  const cellsIn = (minutes: number) => Math.min(subusers, rate * minutes);
  const activeBuckets = (minutes: number) => 1 - Math.exp(-rate * minutes);
  const arrivals =
    Math.min(1_500, ingests * 1_500 * 60) * (run.rowBytes.arrivalOverhead ?? 500) +
    Math.min(1_500, ingests * 1_500 * 60) * cellsIn(1 / Math.max(ingests * 60, 1e-9)) * cellBytes;
  const tier = (slots: number, minutes: number) =>
    slots * activeBuckets(minutes) * (200 + cellsIn(minutes) * cellBytes);
  const seriesBytes = (subusers + 30) * (run.rowBytes.seriesValue ?? 14);
  return arrivals + tier(4_044, 5) + tier(2_208, 60) + tier(401, 1_440) + (2_208 + 401) * seriesBytes;
}

export interface ScenarioResult {
  scenario: string;
  requestsPerMinute: number;
  recordsPerPost: number;
  queues: QueueResult;
  hottest: { rank: number; shards: number; ratePerMinute: number; load: StoreLoad; run: StoreRun };
  fleet: Record<string, number>;
  parts: Array<{ part: string; load: number; limit: number; unit: string }>;
  cost: Array<{ line: string; usdPerBillion: number }>;
  /** Features' shares of the cost lines, per billion gateway requests. */
  features: { detectionUsdPerBillion: number; idleTailUsdPerBillion: number };
  refusal: { seconds: number; bytesPast: number; rank: number; kind: string };
  samples: Array<{
    rank: number;
    ratePerMinute: number;
    ingestsPerMinute: number;
    rowsPerActiveMinute: number;
    rowsByTablePerMinute: Record<string, number>;
    cpuUsPerRecord: number;
  }>;
}

/** Runs one scenario: the route and queues, the sampled stores, the fleet's sums, the limits and the cost. */
export async function simulateScenario(
  scenario: Scenario,
  options: Options,
  d1: D1Costs,
  log: (line: string) => void,
): Promise<ScenarioResult> {
  const queues = await simulateQueues(scenario, options);
  const shares = accountShares(scenario.mix);
  const rateOf = (rank: number) => (shares[rank - 1] as number) * scenario.requestsPerMinute;
  const ranks = scenario.mix.zipf === null ? [1] : options.sampleRanks;
  const runs = new Map<number, { run: StoreRun; shards: number }>();
  for (const rank of ranks) {
    const rate = rateOf(rank);
    // The store's CPU at the account's full rate, over enough time for three of its ingests.
    const probeMinutes = Math.max(options.hotMinutes, 3 / Math.max(ingestsPerSecond(rate, queues) * 60, 1e-9) + 0.2);
    const probe = simulateStore(
      rank,
      rate,
      SUBUSERS,
      queues,
      Math.min(probeMinutes, options.minutes),
      { countRows: false, recordsPerIngest: Number.POSITIVE_INFINITY },
      d1,
    );
    const cpu = probe.records > 0 ? (probe.cpuSeconds / probe.records) * (rate / 60) : 0;
    const bytes = retainedBytes(probe, rate, SUBUSERS, ingestsPerSecond(rate, queues));
    // A store past `shardAbove` of one CPU, or past `shardBytes`, is split by sub-user hash (`accounts.traffic_shards`,
    // docs/scale.md "Re-sharding an account"): each shard takes its share of the rate and of the sub-users.
    const need = Math.max(1, cpu / options.shardAbove, bytes / options.shardBytes);
    const shards = need > 1 ? 2 ** Math.ceil(Math.log2(need)) : 1;
    const run = simulateStore(
      rank,
      rate / shards,
      SUBUSERS / shards,
      queues,
      options.minutes,
      { countRows: true, recordsPerIngest: options.recordsPerIngest },
      d1,
    );
    run.cpuSeconds = probe.records > 0 ? (probe.cpuSeconds / probe.records) * run.records : 0;
    runs.set(rank, { run, shards });
    // A sharded account's ingests call each shard's store: the calls past one store's are sharding's cost.
    const extraCalls = (shards - 1) * loadOf(run, rate / shards, SUBUSERS / shards, queues).requestsPerSecond;
    log(
      `  rank ${rank}: ${Math.round(rate)} req/min` +
        `${shards > 1 ? ` (${shards} sub-user shards: +${extraCalls.toFixed(3)} store calls/s)` : ""}, ` +
        `${(run.ingests / run.minutes).toFixed(2)} ingests/min, ` +
        `${(run.rowsWritten / Math.max(1, run.activeMinutes)).toFixed(2)} rows per active minute, ` +
        `${((run.cpuSeconds / Math.max(1, run.records)) * 1e6).toFixed(1)} µs per record`,
    );
  }
  let objectRequests = 0;
  let objectCpu = 0;
  let objectRows = 0;
  let objectBytes = 0;
  let d1Batches = 0;
  let d1Rows = 0;
  let d1Writer = 0;
  let detectionCpu = 0;
  let detectionRows = 0;
  for (let rank = 1; rank <= ACCOUNTS; rank++) {
    const sample = ranks.reduce((best, r) =>
      Math.abs(Math.log(r / rank)) < Math.abs(Math.log(best / rank)) ? r : best,
    );
    const { run, shards } = runs.get(sample) as { run: StoreRun; shards: number };
    const load = loadOf(run, rateOf(rank) / shards, SUBUSERS / shards, queues);
    objectRequests += load.requestsPerSecond * shards;
    objectCpu += load.cpuSecondsPerSecond * shards;
    objectRows += load.rowsWrittenPerSecond * shards;
    objectBytes += load.retainedBytes * shards;
    d1Batches += load.d1BatchesPerSecond * shards;
    d1Rows += load.d1RowsPerSecond * shards;
    d1Writer += load.d1WriterSecondsPerSecond * shards;
    detectionCpu += load.detectionCpuSecondsPerSecond * shards;
    detectionRows += load.detectionRowsPerSecond * shards;
  }
  const top = runs.get(1) as { run: StoreRun; shards: number };
  const hotLoad = loadOf(top.run, rateOf(1) / top.shards, SUBUSERS / top.shards, queues);
  const recordsPerSecond = scenario.requestsPerMinute / 60;
  // Each store's rows read: as its rows written, at the ratio its sampled run measured.
  const objectRowsRead = objectRows * readsPerWrite(runs);
  // The batch ledger: its calls (recall, then record) and the one row a new batch writes, kept 8 days; the owners'
  // lookup in D1 for names the isolate's cache does not hold.
  const { ledger } = queues;
  objectRequests += ledger.callsPerPost * queues.postsPerSecond;
  objectCpu += (ledger.cpuMsPerPost * queues.postsPerSecond) / 1000;
  objectRows += ledger.rowsWrittenPerPost * queues.postsPerSecond;
  const ledgerRowsRead = ledger.rowsReadPerPost * queues.postsPerSecond;
  objectBytes += ledger.bytesPerPost * queues.postsPerSecond * 8 * 86_400;
  const d1RowsRead = queues.ownerRowsReadPerPost * queues.postsPerSecond;
  const d1ReadSeconds = (queues.ownerLookupMsPerPost * queues.postsPerSecond) / 1000;
  // Every owner read on one replica: D1 places replicas near the readers, so a fleet in several regions spreads them.
  // With the tail's registry read, at worst once a POST (every POST in an isolate whose copy is a second old).
  const d1ReplicaSeconds = ((queues.ownerReplicaMsPerPost + queues.idleTail.d1Ms) * queues.postsPerSecond) / 1000;
  // D1 keeps a year of capped sub-users' months (~100 bytes each).
  const d1Bytes = ACCOUNTS * (SUBUSERS / CAPPED_EVERY) * 12 * 100;
  const workerRequests = queues.postsPerSecond + queues.routeBatchesPerSecond + queues.shardBatchesPerSecond;
  const workerCpuMs =
    queues.routeCpuMsPerPost * queues.postsPerSecond +
    queues.forwardCpuMsPerBatch * queues.routeBatchesPerSecond +
    queues.shardReadMsPerBatch * queues.shardBatchesPerSecond;
  const fleet = {
    objectRequestsPerSecond: objectRequests,
    objectCpuSecondsPerSecond: objectCpu,
    objectRowsWrittenPerSecond: objectRows,
    objectBytes,
    d1BatchesPerSecond: d1Batches,
    d1RowsPerSecond: d1Rows,
    d1WriterSecondsPerSecond: d1Writer,
    d1ReadSecondsPerSecond: d1ReadSeconds,
    d1ReplicaSecondsPerSecond: d1ReplicaSeconds,
    d1RowsReadPerSecond: d1RowsRead,
    objectRowsReadPerSecond: objectRowsRead + ledgerRowsRead,
    d1Bytes,
    workerRequestsPerSecond: workerRequests,
    workerCpuMsPerSecond: workerCpuMs,
  };
  const parts = [
    {
      part: "usage queue messages/s",
      load: queues.routeMessagesPerSecond,
      limit: LIMITS.queueMessagesPerSecond,
      unit: "msg/s",
    },
    {
      part: "busiest shard queue msg/s",
      load:
        queues.shardMessagesPerShardPerSecond +
        ((rateOf(1) / 60) * queues.gzippedBytesPerRecord) / queues.shardMessageBytes,
      limit: LIMITS.queueMessagesPerSecond,
      unit: "msg/s",
    },
    {
      part: "queue bytes/s (both)",
      load: queues.routeBytesPerSecond + queues.shardBytesPerSecond,
      limit: LIMITS.queueBytesPerSecond,
      unit: "B/s",
    },
    { part: "D1 write batches/s", load: d1Batches, limit: 1_000, unit: "batch/s" },
    {
      part: "D1 primary time (writes + owner reads)",
      load: d1Writer + d1ReadSeconds,
      limit: LIMITS.d1WriterSecondsPerSecond,
      unit: "s/s",
    },
    {
      part: "D1 read replica time (owners, tails)",
      load: d1ReplicaSeconds,
      limit: LIMITS.d1WriterSecondsPerSecond,
      unit: "s/s",
    },
    { part: "largest D1 database (a year)", load: d1Bytes, limit: LIMITS.d1Bytes, unit: "B" },
    {
      part: "busiest batch-ledger shard req/s",
      load: (ledger.callsPerPost * queues.postsPerSecond) / ledger.shards,
      limit: LIMITS.objectRequestsPerSecond,
      unit: "req/s",
    },
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
    {
      part: "largest store row",
      load: Math.max(...[...runs.values()].map(({ run }) => run.rowBytes.largestRow ?? 0)),
      limit: LIMITS.objectRowBytes,
      unit: "B",
    },
  ];
  const perBillion = (usdPerSecond: number) => (usdPerSecond / recordsPerSecond) * 1e9;
  const cost = [
    { line: "Worker requests", usd: (workerRequests * PRICES.workerRequestsPerMillion) / 1e6 },
    { line: "Worker CPU-ms", usd: (workerCpuMs * PRICES.workerCpuMsPerMillion) / 1e6 },
    { line: "queue operations", usd: (queues.queueOpsPerSecond * PRICES.queueOperationsPerMillion) / 1e6 },
    { line: "DO requests", usd: (objectRequests * PRICES.objectRequestsPerMillion) / 1e6 },
    {
      line: "DO duration",
      usd: (objectGbSeconds(objectRequests, objectCpu * 1000) * PRICES.objectGbSecondsPerMillion) / 1e6,
    },
    { line: "DO rows written", usd: (objectRows * PRICES.objectRowsWrittenPerMillion) / 1e6 },
    {
      line: "DO rows read",
      usd: ((objectRowsRead + ledgerRowsRead) * PRICES.objectRowsReadPerMillion) / 1e6,
    },
    { line: "D1 rows written", usd: (d1Rows * PRICES.d1RowsWrittenPerMillion) / 1e6 },
    { line: "D1 rows read", usd: (d1RowsRead * PRICES.d1RowsReadPerMillion) / 1e6 },
    {
      line: "storage (DO + D1)",
      usd:
        ((objectBytes / 1e9) * PRICES.objectStorageGbMonth + (d1Bytes / 1e9) * PRICES.d1StorageGbMonth) /
        SECONDS_PER_MONTH,
    },
  ].map(({ line, usd }) => ({ line, usdPerBillion: perBillion(usd) }));
  // Spike detection is in the lines above (the stores run it): its CPU as duration, its rows. An idle account's live
  // tail costs each POST at most the registry read (its Worker CPU, a row read at least), which the route's
  // lines hold once a simulated second.
  const { idleTail } = queues;
  const features = {
    detectionUsdPerBillion: perBillion(
      (objectGbSeconds(0, detectionCpu * 1000) * PRICES.objectGbSecondsPerMillion) / 1e6 +
        (detectionRows * PRICES.objectRowsWrittenPerMillion) / 1e6,
    ),
    idleTailUsdPerBillion: perBillion(
      (queues.postsPerSecond *
        (idleTail.cpuMs * PRICES.workerCpuMsPerMillion +
          Math.max(1, idleTail.rowsRead) * PRICES.d1RowsReadPerMillion)) /
        1e6,
    ),
  };
  const refusals = ranks.flatMap((rank) =>
    (runs.get(rank)?.run.refusals ?? []).map((refusal) => ({ ...refusal, rank })),
  );
  const worst = refusals.reduce((w, r) => (r.seconds > w.seconds ? r : w), {
    seconds: 0,
    bytesPast: 0,
    rank: 0,
    kind: "none",
  } as { seconds: number; bytesPast: number; rank: number; kind: string });
  return {
    scenario: scenario.mix.name,
    requestsPerMinute: scenario.requestsPerMinute,
    recordsPerPost: scenario.recordsPerPost,
    queues,
    hottest: { rank: 1, shards: top.shards, ratePerMinute: rateOf(1), load: hotLoad, run: top.run },
    fleet,
    parts,
    cost,
    features,
    refusal: { ...worst, bytesPast: Math.max(...refusals.map((r) => r.bytesPast), 0) },
    samples: ranks.map((rank) => {
      const { run } = runs.get(rank) as { run: StoreRun };
      return {
        rank,
        ratePerMinute: rateOf(rank),
        ingestsPerMinute: run.ingests / run.minutes,
        rowsPerActiveMinute: run.rowsWritten / Math.max(1, run.activeMinutes),
        rowsByTablePerMinute: Object.fromEntries(
          Object.entries(run.rowsByTable).map(([table, rows]) => [table, rows / Math.max(1, run.activeMinutes)]),
        ),
        cpuUsPerRecord: (run.cpuSeconds / Math.max(1, run.records)) * 1e6,
      };
    }),
  };
}

/** Rows the sampled stores read per row they wrote. */
function readsPerWrite(runs: Map<number, { run: StoreRun }>): number {
  const all = [...runs.values()];
  return sum(all.map(({ run }) => run.rowsRead)) / Math.max(1, sum(all.map(({ run }) => run.rowsWritten)));
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

const ownerTags = new Map<string, Promise<string>>();

/** A fleet sub-user's signed owner, as its nodes' snapshots carry it (signed once per sub-user). */
function ownerTagOf(owner: { subuserId: string; gateName: string }): Promise<string> {
  let tag = ownerTags.get(owner.subuserId);
  if (!tag) {
    tag = ownerTag(SIM_SEALING_KEY, { ...owner, name: owner.gateName, accountId: accountOfSubuser(owner.subuserId) });
    ownerTags.set(owner.subuserId, tag);
  }
  return tag;
}

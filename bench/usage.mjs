// Usage reports as the gateway sends them (src/domain/traffic/usage-records.ts): realistic, reproducible records,
// batches of up to 1,000 posted concurrently to POST /internal/gateway/usage, and a wait until the account's
// traffic store has absorbed them (the `usage` queue's consumer applies them asynchronously).
import { gzipSync } from "node:zlib";
import { fetchFresh, inParallel, percentile, sleep } from "./http.mjs";

export const RECORDS_PER_BATCH = 1000;
/**
 * The store folds a 5-minute bucket two minutes after it ends (src/durable-objects/traffic-store/folded-tiers.ts):
 * history is folded as it lands; waiting this long after the last usage covers the seeding's last minutes too, so
 * queries and reports are measured on a folded store (as in production, where history is long folded).
 */
export const STORE_FOLD_WAIT_MS = 7 * 60_000;
const PREFIX = "user"; // vars.GATEWAY_USER_PREFIX (wrangler.toml)

const REGIONS = [
  { cc: "us", geos: ["us/ca/la", "us/ny/nyc", "us/tx/dallas"], asns: [7922, 7018, 701] },
  { cc: "gb", geos: ["gb/eng/london", "gb/sct/glasgow"], asns: [2856, 5089] },
  { cc: "de", geos: ["de/be/berlin", "de/by/munich"], asns: [3320, 6805] },
  { cc: "br", geos: ["br/sp/saopaulo"], asns: [28573, 18881] },
  { cc: "jp", geos: ["jp/13/tokyo"], asns: [2516, 4713] },
  { cc: "in", geos: ["in/mh/mumbai"], asns: [55836, 45609] },
];
const TAGS = [null, null, null, "scraper", "seo-eu", "price-watch", "ads-verify"];
const HOSTS = ["example.com", "shop.example.net", "api.example.org", "news.example.com", "cdn.example.io"];
const ERRORS = ["upstream-timeout", "upstream-refused", "connect-failed"];
const ERROR_SHARE = 0.04;

/** A small seeded PRNG (mulberry32), so every run reports the same usage. */
export function random(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  next.pick = (list) => list[Math.floor(next() * list.length)];
  next.int = (min, max) => min + Math.floor(next() * (max - min + 1));
  return next;
}

/** The rotating gateway username of a residential sub-user. */
export function rotatingUsername(name, region = "us") {
  return `${PREFIX}_${name}-type-res-region-${region}`;
}

/** A sticky-session username (grammar: src/domain/gateway/username.ts); sessions last at most 30 min. */
export function sessionUsername(name, sessionId, region = "us", minutes = 30) {
  return `${PREFIX}_${name}-type-res-region-${region}-session-${sessionId}-sesstime-${minutes}`;
}

/**
 * One usage record of `username` at `ts` (ms). `exit` pins the exit (a sticky session keeps its IP and region);
 * otherwise region, ASN, IP, tag, host and errors vary.
 */
export function usageRecord(rng, { requestId, username, ts, exit }) {
  const region = exit?.region ?? rng.pick(REGIONS);
  const failed = rng() < ERROR_SHARE;
  return {
    request_id: requestId,
    ts: new Date(ts).toISOString(),
    product: "residential",
    username,
    dest_ip: null,
    method: rng() < 0.85 ? "GET" : "POST",
    target_host: rng.pick(HOSTS),
    status: failed ? 502 : rng() < 0.95 ? 200 : 404,
    bytes_in: failed ? 0 : rng.int(500, 60_000),
    bytes_out: rng.int(80, 2_000),
    exit_ip: exit?.ip ?? `203.0.${rng.int(0, 255)}.${rng.int(1, 254)}`,
    exit_geo: rng.pick(region.geos),
    exit_asn: exit?.asn ?? rng.pick(region.asns),
    carrier_name: null,
    tag: rng.pick(TAGS),
    error_code: failed ? rng.pick(ERRORS) : null,
    repinned: false,
  };
}

/** A fixed exit for a sticky session: one region, ASN and IP. */
export function sessionExit(rng) {
  const region = rng.pick(REGIONS);
  return { region, asn: rng.pick(region.asns), ip: `198.51.${rng.int(0, 255)}.${rng.int(1, 254)}` };
}

/** Request ids are `req_` and up to 60 alphanumerics; `runTag` keeps them unique across runs. */
export function requestId(runTag, batch, index) {
  return `req_${runTag}b${batch.toString(36)}i${index.toString(36)}`;
}

/**
 * Bodies of POST /internal/gateway/usage: records cut into batches of 1,000, each with a unique batch_id,
 * gzip-compressed as the gateway sends them (gateway/usage-reporter.ts).
 */
export function batchBodies(records, batchPrefix) {
  const bodies = [];
  for (let i = 0; i < records.length; i += RECORDS_PER_BATCH) {
    const batch = records.slice(i, i + RECORDS_PER_BATCH);
    bodies.push(gzipSync(JSON.stringify({ batch_id: `${batchPrefix}-${bodies.length}`, records: batch })));
  }
  return bodies;
}

/**
 * Posts the bodies, `concurrency` in flight. Each must be accepted whole (202, nothing dropped, no duplicate).
 * Returns when the first POST started (performance.now()), the POSTs' latencies (ms) and the number of records.
 */
export async function postBatches(api, gatewayToken, bodies, concurrency) {
  const headers = {
    Authorization: `Bearer ${gatewayToken}`,
    "Content-Type": "application/json",
    "Content-Encoding": "gzip",
  };
  const latencies = [];
  let accepted = 0;
  const startedAt = performance.now();
  await inParallel(bodies, concurrency, async (body) => {
    const sent = performance.now();
    const response = await fetchFresh(`${api.base}/internal/gateway/usage`, { method: "POST", headers, body });
    const text = await response.text();
    latencies.push(performance.now() - sent);
    const result = response.status === 202 ? JSON.parse(text) : null;
    if (!result || result.dropped > 0 || result.duplicate) {
      throw new Error(`POST /internal/gateway/usage: ${response.status} ${text.slice(0, 300)}`);
    }
    accepted += result.accepted;
  });
  return { startedAt, postedAt: performance.now(), latencies, accepted };
}

export function latencySummary(latencies) {
  return { p50: Math.round(percentile(latencies, 50)), p99: Math.round(percentile(latencies, 99)) };
}

/**
 * Polls each account's residential traffic total over [from, to) until it reaches the expected requests
 * (more would mean double counting: fail). Returns performance.now() when the last account was complete.
 */
export async function waitForAbsorbed(api, expectations, { timeoutMs = 600_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  // One account at a time: all must be complete, and each poll costs the worker a query.
  for (const expected of expectations) {
    for (;;) {
      const total = await totalRequests(api, expected.auth, expected.from, expected.to);
      if (total > expected.requests) {
        throw new Error(`traffic counted ${total} requests, more than the ${expected.requests} reported`);
      }
      if (total === expected.requests) break;
      if (Date.now() > deadline) {
        throw new Error(`usage not absorbed within ${timeoutMs / 1000} s (${total}/${expected.requests})`);
      }
      await sleep(intervalMs);
    }
  }
  return performance.now();
}

/** An account's residential requests over [from, to) (ms), as GET /v1/residential/traffic answers. */
export async function totalRequests(api, auth, from, to) {
  const answer = await api.get(`/v1/residential/traffic?${rangeQuery(from, to)}`, auth);
  return answer.rows[0]?.requests ?? 0;
}

export function rangeQuery(from, to) {
  return `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
}

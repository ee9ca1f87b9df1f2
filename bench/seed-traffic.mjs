// Traffic queries over a large history: an account with 1,000 sub-users and 90 days of usage at every resolution,
// then GET /v1/residential/traffic over 90 days per sub-user and over 24 h per hour, and a page of the request log
// with its filters.
//
// Method: a fresh account (so persisted state cannot add rows) gets its sub-users, then its history through the
// gateway's usage endpoint with past timestamps: every sub-user one record per day for 90 days, and a subset one
// record per minute over the last 23 hours. Once the store has absorbed it all, the benchmark waits for the
// store's fold (its alarm moves pending rows into the 5-minute, hourly, daily and cumulative tiers about 60 s after
// the first usage since the last fold), so the queries measure the folded store. Each query's answer is checked
// once against what was seeded (rows and totals) before it is measured.
import { createSubusers, freshAccount } from "./accounts.mjs";
import { sleep } from "./http.mjs";
import {
  batchBodies,
  postBatches,
  random,
  rangeQuery,
  requestId,
  rotatingUsername,
  STORE_FOLD_WAIT_MS,
  usageRecord,
  waitForAbsorbed,
} from "./usage.mjs";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const DAYS = 90;
/** Minute-spaced records cover the last 23 h, so they stay inside a 24 h window while the benchmark runs. */
const MINUTE_RECORDS_SPAN = 23 * 60;

/**
 * Creates the account and its sub-users, posts the history, waits until it is absorbed. Returns the account, what
 * was seeded, and when the store's last fold is due.
 */
export async function seedTrafficHistory(api, { adminToken, gatewayToken }, options) {
  const started = performance.now();
  const account = await freshAccount(api, adminToken, "bench-traffic");
  const subusers = await createSubusers(api, account.auth, {
    count: options.subusers,
    prefix: "traffic",
    concurrency: options.concurrency,
  });
  const subusersCreated = performance.now();
  const seededAt = Date.now();
  const records = historyRecords(subusers, seededAt, options.minuteSubusers);
  const bodies = batchBodies(records, `bench-history-${seededAt.toString(36)}`);
  const posted = await postBatches(api, gatewayToken, bodies, options.concurrency);
  const oldest = records.reduce((min, record) => Math.min(min, Date.parse(record.ts)), seededAt);
  const expectation = { auth: account.auth, from: oldest - HOUR, to: seededAt + MINUTE, requests: records.length };
  await waitForAbsorbed(api, [expectation], { intervalMs: 500 });
  const absorbed = performance.now();
  return {
    account,
    subusers,
    records,
    seededAt,
    foldDueAt: Date.now() + STORE_FOLD_WAIT_MS + 2_000,
    details: {
      subusers: subusers.length,
      records: records.length,
      batches: bodies.length,
      secondsCreatingSubusers: round2((subusersCreated - started) / 1000),
      secondsSeeding: round2((absorbed - posted.startedAt) / 1000),
    },
  };
}

/**
 * Per sub-user one record a day for 90 days (at a time of day varying by sub-user, 30 min to 12 h before the
 * seeding); for the first `minuteSubusers` also one a minute over the last 23 h. Listed so that a batch holds one
 * day of every sub-user (a gateway batch spans many sub-users), or 20 minutes of the minute subset.
 */
function historyRecords(subusers, seededAt, minuteSubusers) {
  const rng = random(0x90d);
  const runTag = seededAt.toString(36);
  const records = [];
  const add = (subuser, ts) =>
    records.push(
      usageRecord(rng, {
        requestId: requestId(runTag, Math.floor(records.length / 1000), records.length % 1000),
        username: rotatingUsername(subuser.name),
        ts,
      }),
    );
  // Oldest first, as a gateway reports: usage older than what a store has folded is patched into its folded rows.
  for (let day = DAYS - 1; day >= 0; day--) {
    for (const [s, subuser] of subusers.entries()) add(subuser, seededAt - day * DAY - (30 + ((s * 7) % 690)) * MINUTE);
  }
  for (let minute = MINUTE_RECORDS_SPAN; minute >= 1; minute--) {
    for (const subuser of subusers.slice(0, minuteSubusers)) add(subuser, seededAt - minute * MINUTE);
  }
  return records;
}

/**
 * Waits for the store's fold, then builds the query targets, each checked once against the seeding (grouped by
 * error code, against its failed records).
 */
export async function trafficQueryTargets(api, seeded) {
  await sleep(Math.max(0, seeded.foldDueAt - Date.now()));
  const now = Date.now();
  const queries = [
    {
      name: "GET /v1/residential/traffic 90 d, group_by=subuser",
      from: now - 90 * DAY + HOUR,
      groupBy: "subuser",
      expectRows: seeded.subusers.length,
      goal: 0.25,
    },
    { name: "GET /v1/residential/traffic 24 h, group_by=hour", from: now - DAY, groupBy: "hour", goal: 0.4 },
    {
      name: "GET /v1/residential/traffic 90 d, group_by=status",
      from: now - 90 * DAY + HOUR,
      groupBy: "status",
      goal: 0.25,
    },
    {
      name: "GET /v1/residential/traffic 90 d, group_by=error_code",
      from: now - 90 * DAY + HOUR,
      groupBy: "error_code",
      goal: 0.25,
    },
  ];
  const targets = [];
  for (const query of queries) {
    const path = `/v1/residential/traffic?${rangeQuery(query.from, now)}&group_by=${query.groupBy}`;
    const inRange = seeded.records.filter(
      (record) => Date.parse(record.ts) >= query.from && (query.groupBy !== "error_code" || record.error_code !== null),
    );
    checkAnswer(query, await api.get(path, seeded.account.auth), inRange, seeded.subusers);
    targets.push({ name: query.name, path, headers: seeded.account.auth, goal: query.goal });
  }
  targets.push(await requestLogTarget(api, seeded));
  return targets;
}

/**
 * A page of the sampled request log with its filters: one sub-user of the minute subset, 50 entries. Checked once:
 * the account logs every request (under 100 a minute), the log is the newest 1,000, and the page is the sub-user's
 * entries among them, newest first.
 */
async function requestLogTarget(api, seeded) {
  const subuser = seeded.subusers[0];
  const path = `/v1/residential/requests?subuser=${subuser.id}&limit=50`;
  const answer = await api.get(path, seeded.account.auth);
  const username = rotatingUsername(subuser.name);
  const newestFirst = (a, b) =>
    Date.parse(b.ts) - Date.parse(a.ts) || (a.request_id < b.request_id ? 1 : a.request_id > b.request_id ? -1 : 0);
  const newest = [...seeded.records]
    .sort(newestFirst)
    .slice(0, 1000)
    .filter((record) => record.username === username)
    .slice(0, 50)
    .map((record) => record.request_id);
  const got = answer.data.map((entry) => entry.request_id);
  if (JSON.stringify(got) !== JSON.stringify(newest)) {
    throw new Error(
      `request log page: wrong answer ${JSON.stringify({ got: got.slice(0, 3), newest: newest.slice(0, 3) })}`,
    );
  }
  return {
    name: "GET /v1/residential/requests, one sub-user, 50 entries",
    path,
    headers: seeded.account.auth,
    goal: 0.25,
  };
}

/** The answer's totals must equal the seeded records'; grouped by sub-user, also every row's requests. */
function checkAnswer(query, answer, records, subusers) {
  const expected = totals(records);
  const got = totals(answer.rows);
  const wrong = Object.keys(expected).filter((metric) => got[metric] !== expected[metric]);
  if (query.expectRows !== undefined && answer.rows.length !== query.expectRows) {
    wrong.push(`${answer.rows.length} rows instead of ${query.expectRows}`);
  }
  if (query.groupBy === "subuser") {
    const idByUsername = new Map(subusers.map((subuser) => [rotatingUsername(subuser.name), subuser.id]));
    const requests = new Map();
    for (const record of records) {
      const id = idByUsername.get(record.username);
      requests.set(id, (requests.get(id) ?? 0) + 1);
    }
    const off = answer.rows.filter((row) => row.requests !== requests.get(row.subuser));
    if (off.length > 0) wrong.push(`${off.length} sub-users' requests`);
  }
  if (wrong.length > 0) {
    throw new Error(`${query.name}: wrong answer (${wrong.join(", ")}): ${JSON.stringify({ got, expected })}`);
  }
}

/** Sums of records (or of answer rows, which use the same field names). */
function totals(rows) {
  const sum = { requests: 0, bytes_in: 0, bytes_out: 0, errors: 0 };
  for (const row of rows) {
    sum.requests += row.requests ?? 1;
    sum.bytes_in += row.bytes_in;
    sum.bytes_out += row.bytes_out;
    sum.errors += row.errors ?? (row.error_code === null ? 0 : 1);
  }
  return sum;
}

const round2 = (value) => Math.round(value * 100) / 100;

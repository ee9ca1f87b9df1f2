// (a) Usage ingestion end to end: gateway batches of 1,000 records (gzip, as the gateway sends them) posted to
// POST /internal/gateway/usage, `concurrency` in flight, until the accounts' traffic stores have absorbed them.
//
// Method: a few fresh accounts with many sub-users each; a share of the records use sticky-session usernames
// whose sessions were pinned by an authorize first (usage of an unknown session would be counted in traffic but
// not in the session). All batch bodies are built before the clock starts, so the client's own JSON work is not
// measured. A warm-up round is posted and absorbed first. Then the clock runs from the first POST of the measured
// round until GET /v1/residential/traffic of every account counts every request reported (polled only once all
// POSTs are answered, one account at a time, so that polling does not compete with the POSTs).
// records/s = records ÷ that time; the POSTs' own latency is reported too.
import { createSubusers, freshAccount } from "./accounts.mjs";
import { cpuSpent } from "./cpu.mjs";
import { inParallel } from "./http.mjs";
import {
  batchBodies,
  latencySummary,
  postBatches,
  RECORDS_PER_BATCH,
  random,
  requestId,
  rotatingUsername,
  sessionExit,
  sessionUsername,
  usageRecord,
  waitForAbsorbed,
} from "./usage.mjs";

const ACCOUNTS = 4;
const SUBUSERS_PER_ACCOUNT = 25;
const SESSIONS_PER_SUBUSER = 2;
const SESSION_SHARE = 0.2;
/** Records are stamped within this long before they are built (as a gateway reports within minutes). */
const SPREAD_MS = 5 * 60_000;
const WARM_UP_BATCHES = 10;

/** Accounts, sub-users and pinned sessions for the ingestion run. */
export async function setUpIngestion(api, { adminToken, gatewayToken }) {
  const accounts = await inParallel(Array.from({ length: ACCOUNTS }), 2, async (_, a) => {
    const account = await freshAccount(api, adminToken, `bench-ingest-${a}`);
    const subusers = await createSubusers(api, account.auth, { count: SUBUSERS_PER_ACCOUNT, prefix: "ingest" });
    return { ...account, subusers };
  });
  const rng = random(0x1a2b);
  const subusers = accounts.flatMap((account) => account.subusers.map((subuser) => ({ ...subuser, account })));
  for (const subuser of subusers) {
    subuser.sessions = Array.from({ length: SESSIONS_PER_SUBUSER }, (_, i) => {
      const exit = sessionExit(rng);
      return { username: sessionUsername(subuser.name, `bench${i}`, exit.region.cc), exit };
    });
  }
  const gatewayAuth = { Authorization: `Bearer ${gatewayToken}` };
  await inParallel(
    subusers.flatMap((subuser) => subuser.sessions.map((session) => ({ subuser, session }))),
    8,
    async ({ subuser, session }) => {
      const decision = await api.post("/internal/gateway/authorize", gatewayAuth, {
        username: session.username,
        password: subuser.password,
        source_ip: "198.51.100.10",
        product: "residential",
      });
      if (!decision.allow || !decision.session)
        throw new Error(`pinning ${session.username}: ${JSON.stringify(decision)}`);
    },
  );
  return { accounts, subusers, pinnedAt: Date.now(), sent: new Map(accounts.map((a) => [a.id, 0])) };
}

/** `batches` batches of 1,000 records over all sub-users, with their share of session usage; counted per account. */
function buildRound(setup, { batches, round, runTag }) {
  const rng = random(0x5eed + round);
  const builtAt = Date.now();
  // A session's usage cannot predate its pin (the gate matches usage to the session started before it).
  const sessionSpread = Math.min(SPREAD_MS, builtAt - setup.pinnedAt);
  const records = [];
  for (let b = 0; b < batches; b++) {
    for (let i = 0; i < RECORDS_PER_BATCH; i++) {
      const subuser = rng.pick(setup.subusers);
      const session = rng() < SESSION_SHARE ? rng.pick(subuser.sessions) : null;
      const region = session?.exit.region.cc ?? "us";
      records.push(
        usageRecord(rng, {
          requestId: requestId(`${runTag}r${round}`, b, i),
          username: session?.username ?? rotatingUsername(subuser.name, region),
          ts: builtAt - Math.floor(rng() * (session ? sessionSpread : SPREAD_MS)),
          exit: session?.exit,
        }),
      );
      setup.sent.set(subuser.account.id, setup.sent.get(subuser.account.id) + 1);
    }
  }
  return batchBodies(records, `bench-${runTag}-r${round}`);
}

/** Posts a round and waits until every account's traffic counts all it was sent so far. */
async function ingestRound(api, gatewayToken, setup, bodies, concurrency) {
  const posted = await postBatches(api, gatewayToken, bodies, concurrency);
  const expectations = setup.accounts.map((account) => ({
    auth: account.auth,
    from: setup.pinnedAt - SPREAD_MS - 60_000,
    to: Date.now() + 60 * 60_000,
    requests: setup.sent.get(account.id),
  }));
  const absorbedAt = await waitForAbsorbed(api, expectations);
  return { ...posted, absorbedAt };
}

/**
 * The measured round: a benchmark row (records/s, POST latency) and its details, with the CPU ms per batch of
 * each process `cpuSample()` reports (bench/cpu.mjs).
 */
export async function measureIngestion(api, gatewayToken, setup, { batches, concurrency, cpuSample = () => ({}) }) {
  const runTag = Date.now().toString(36);
  await ingestRound(
    api,
    gatewayToken,
    setup,
    buildRound(setup, { batches: WARM_UP_BATCHES, round: 0, runTag }),
    concurrency,
  );
  const bodies = buildRound(setup, { batches, round: 1, runTag });
  const cpuBefore = cpuSample();
  const result = await ingestRound(api, gatewayToken, setup, bodies, concurrency);
  const cpu = cpuSpent(cpuBefore, cpuSample());
  const seconds = (result.absorbedAt - result.startedAt) / 1000;
  const postSeconds = (result.postedAt - result.startedAt) / 1000;
  return {
    rps: result.accepted / seconds,
    ...latencySummary(result.latencies),
    ok: result.accepted,
    errors: 0,
    details: {
      records: result.accepted,
      batches: bodies.length,
      concurrency,
      accounts: setup.accounts.length,
      subusers: setup.subusers.length,
      sessionShare: SESSION_SHARE,
      secondsUntilAbsorbed: round2(seconds),
      secondsPosting: round2(postSeconds),
      postsPerSecond: round2(bodies.length / postSeconds),
      recordsPerSecondAccepted: Math.round(result.accepted / postSeconds),
      cpuMsPerBatch: Object.fromEntries(
        Object.entries(cpu).map(([process, ms]) => [process, round2(ms / bodies.length)]),
      ),
    },
  };
}

const round2 = (value) => Math.round(value * 100) / 100;

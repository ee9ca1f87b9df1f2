// The soak's mixed load, run until told to stop: API reads and writes (a weighted mix at a steady rate), proxied
// requests through the gateway nodes to the loopback target (rotating and sticky usernames, plain HTTP and CONNECT),
// usage batches posted directly with the gateway token (some posted twice, to test the dedupe), and report runs with
// their downloads. What the soak expects the API to show at the end is written to `book` as it goes.
//
// The population (sub-users, API keys, whitelist entries, sticky sessions) grows only until `ctx.populationEndsAt`;
// after it nothing of the kind is created or deleted (the operations that would are reads instead), so that the
// heap's growth then measures leaks, not population. Sticky sessions opened by then are used on: one about to expire
// is paused from 3 minutes before its end to a minute after it, and its username's next request starts the session
// that replaces it (same key and generation, so the same exit).
import { randomBytes, randomUUID } from "node:crypto";
import { sleep } from "../../../bench/http.mjs";
import { ownerHeaders, proxiedRequest, tunnelledRequest } from "./loopback.mjs";

/** Calls per second: API calls of the mix, and proxied requests. */
const RATES = { api: 12, proxy: 10 };
const CONCURRENCY = { api: 4, proxy: 6 };
/** While the population grows, a sticky session is used this long after its first request, then retired (and
 * most often terminated, after which its username's next request opens a new session). */
const SESSION_USE_MS = 3 * 60_000;
/** A session is not used from this long before its earliest possible end (a request's retries fit in it)… */
const PAUSE_BEFORE_END_MS = 3 * 60_000;
/** …until this long after its latest possible end: the username's next request then starts a new session. */
const RESUME_AFTER_END_MS = 60_000;
/** No new sticky username this long before the population's end, nor a termination (and its new session). */
const NEW_SESSION_CUTOFF_MS = 10_000;
const TERMINATION_CUTOFF_MS = 60_000;
const SESSIONS_PER_SUBUSER = 3;
const SESSTIME_MINUTES = { residential: 30, mobile: 60 };
const DIRECT_USAGE_EVERY_MS = 15_000;
const REPORT_EVERY_MS = 60_000;
const MAX_CHURN_SUBUSERS = 6;
const MAX_EXTRA_KEYS = 2;
const MAX_WHITELIST = 4;
const DAY_MS = 86_400_000;

/** A new book: what the soak did, and so what the API should show. */
export function newBook() {
  return {
    openingMinor: 0,
    /** order id → {product, totalMinor} */
    orders: new Map(),
    replays: { sent: 0, same: 0 },
    /** `product subuser` → bytes and requests posted directly (each batch once). */
    direct: new Map(),
    directCopies: { sent: 0, duplicate: 0 },
    /**
     * One entry per session the soak expects (a username has several: a new one after its session was terminated
     * or expired), by `track` (`username#n`, what the target counts it under): {track, username, product, subuser,
     * sessionId, sesstime, generation, why ("new" | "terminated" | "expired"), previous (track), successor,
     * firstSentAt, firstUse, lastUse, exits (as the nodes' answers named them), retiredAt, expiring, terminated}.
     */
    sessions: new Map(),
    /** Population changes the load made: {kind: "subuser" | "api-key" | "whitelist", change, at}. */
    population: [],
    reports: { requested: 0, completed: 0, failed: 0, downloaded: 0 },
    /** Proxied requests the gateway refused (4xx): route, status, error code, node, when, attempt. */
    proxyRefusals: [],
    /** Calls the soak itself could not make sense of (an answer without what it needed), by message. */
    scriptErrors: {},
  };
}

/** Runs every part of the load until `stop()`; resolves once every part has stopped. */
export async function runLoad(ctx, stop) {
  const state = {
    tag: randomBytes(3).toString("hex"),
    seq: 0,
    churn: [],
    keys: [],
    orders: [],
    replayable: [],
    liveSessions: [],
  };
  const guard = (task) => () =>
    Promise.resolve()
      .then(() => task(ctx, state))
      .catch((error) => {
        const message = String(error?.message ?? error).slice(0, 200);
        ctx.book.scriptErrors[message] = (ctx.book.scriptErrors[message] ?? 0) + 1;
      });
  const apiMix = weighted(API_OPERATIONS);
  await Promise.all([
    paced(
      RATES.api,
      CONCURRENCY.api,
      stop,
      guard((c, s) => apiMix()(c, s)),
    ),
    paced(RATES.proxy, CONCURRENCY.proxy, stop, guard(proxyOnce)),
    every(DIRECT_USAGE_EVERY_MS, stop, guard(postDirectUsage)),
    every(REPORT_EVERY_MS, stop, guard(runReport)),
  ]);
}

// ── Pacing ─────────────────────────────────────────────────────────────────────────────────────────────────

/** `task` at `rate` per second, at most `concurrency` at once (slower answers slow it down), until `stop()`. */
async function paced(rate, concurrency, stop, task) {
  const started = Date.now();
  let next = 0;
  const worker = async () => {
    while (!stop()) {
      const at = started + (next++ * 1000) / rate;
      if (at > Date.now()) await sleep(at - Date.now());
      if (stop()) return;
      await task();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** `task` every `intervalMs` (the first after one interval), until `stop()`. */
async function every(intervalMs, stop, task) {
  for (let at = Date.now() + intervalMs; ; at += intervalMs) {
    while (Date.now() < at) {
      if (stop()) return;
      await sleep(Math.min(1000, at - Date.now()));
    }
    await task();
  }
}

function weighted(entries) {
  const total = entries.reduce((sum, [weight]) => sum + weight, 0);
  return () => {
    let roll = Math.random() * total;
    for (const [weight, operation] of entries) {
      roll -= weight;
      if (roll < 0) return operation;
    }
    return entries.at(-1)[1];
  };
}

const growing = (ctx, margin = 0) => Date.now() < ctx.populationEndsAt - margin;
/** A population change, at the time its operation was decided (one in flight when the growth ends counts in it). */
const changed = (ctx, kind, change, at) => ctx.book.population.push({ kind, change, at });

const pick = (items) => items[Math.floor(Math.random() * items.length)];
const between = (min, max) => min + Math.floor(Math.random() * (max - min + 1));

/** An answer the operation cannot go on without: anything but `expected` throws (counted as a script error). */
function expect(answer, expected, what) {
  if (answer.status !== expected)
    throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 120)}`);
  return answer.body;
}

// ── API calls ──────────────────────────────────────────────────────────────────────────────────────────────

const get = (ctx, template, options = {}) => ctx.api.call("GET", template, { token: ctx.setup.token, ...options });
const send = (ctx, method, template, options = {}) =>
  ctx.api.call(method, template, { token: ctx.setup.token, ...options });
const products = (ctx) => pick(pick(ctx.setup.subusers).products);
const anySubuser = (ctx, state) => pick([...ctx.setup.subusers, ...state.churn]);
const iso = (ms) => new Date(ms).toISOString();

/** [weight, operation]: reads weigh more than writes; every route is called often enough to be judged. */
const API_OPERATIONS = [
  [3, (ctx) => get(ctx, "/v1/users/me")],
  [2, (ctx) => get(ctx, "/v1/subusers", { query: { label_contains: "soak", limit: "20" } })],
  [3, (ctx, state) => get(ctx, "/v1/subusers/{id}", { params: { id: anySubuser(ctx, state).id } })],
  [1, churnSubuser],
  [1, patchChurnSubuser],
  [0.6, rotateChurnPassword],
  [1, (ctx, state) => get(ctx, "/v1/whitelists", { query: { subuser: anySubuser(ctx, state).id } })],
  [1.2, changeWhitelist],
  [1.5, placeOrder],
  [1, (ctx) => get(ctx, "/v1/orders", { query: { limit: "20" } })],
  [1.5, (ctx, state) => state.orders.length && get(ctx, "/v1/orders/{id}", { params: { id: pick(state.orders) } })],
  [2, (ctx) => get(ctx, "/v1/{product}/balance", { params: { product: products(ctx) } })],
  [3, queryTraffic],
  [2, listSessions],
  [1, getSession],
  [0.4, terminateRetiredSession],
  [1.5, (ctx) => get(ctx, "/v1/{product}/requests", { params: { product: products(ctx) }, query: { limit: "50" } })],
  [1, (ctx) => get(ctx, "/v1/api-keys")],
  [1, (ctx) => get(ctx, "/v1/api-keys/current")],
  [0.8, churnApiKey],
  [1, (ctx) => get(ctx, "/v1/events", { query: { limit: "20" } })],
  [0.8, (ctx) => get(ctx, "/v1/reports")],
  [0.8, (ctx) => get(ctx, "/v1/webhook-endpoints/{id}/deliveries", { params: { id: ctx.setup.endpointId } })],
];

/**
 * Creates a short-lived sub-user, or deletes the oldest once `MAX_CHURN_SUBUSERS` live. Once the population is
 * fixed: reads one instead.
 */
async function churnSubuser(ctx, state) {
  if (!growing(ctx)) {
    await get(ctx, "/v1/subusers/{id}", { params: { id: anySubuser(ctx, state).id } });
    return;
  }
  const at = Date.now();
  if (state.churn.length >= MAX_CHURN_SUBUSERS) {
    const oldest = state.churn.shift();
    expect(await send(ctx, "DELETE", "/v1/subusers/{id}", { params: { id: oldest.id } }), 200, "delete sub-user");
    changed(ctx, "subuser", "deleted", at);
    // Its whitelist goes with it.
    for (const _ of oldest.whitelist) changed(ctx, "whitelist", "deleted", at);
    return;
  }
  const body = {
    label: `soak-churn-${state.tag}-${++state.seq}`,
    products: ["residential"],
    concurrent_max: 5,
    rps_max: 5,
  };
  const created = expect(await send(ctx, "POST", "/v1/subusers", { body }), 201, "create sub-user");
  changed(ctx, "subuser", "created", at);
  state.churn.push({ id: created.id, whitelist: [] });
}

async function patchChurnSubuser(ctx, state) {
  if (state.churn.length === 0) return;
  const body = { status: pick(["active", "disabled"]), concurrent_max: between(1, 10), rps_max: between(1, 10) };
  await send(ctx, "PATCH", "/v1/subusers/{id}", { params: { id: pick(state.churn).id }, body });
}

async function rotateChurnPassword(ctx, state) {
  if (state.churn.length === 0) return;
  await send(ctx, "POST", "/v1/subusers/{id}/rotate-password", { params: { id: pick(state.churn).id } });
}

/**
 * Adds a whitelist entry to a short-lived sub-user, or removes one when it has `MAX_WHITELIST`. Once the population
 * is fixed: reads a sub-user's entries instead.
 */
async function changeWhitelist(ctx, state) {
  if (state.churn.length === 0) return;
  const subuser = pick(state.churn);
  if (!growing(ctx)) {
    await get(ctx, "/v1/whitelists", { query: { subuser: subuser.id } });
    return;
  }
  const at = Date.now();
  if (subuser.whitelist.length >= MAX_WHITELIST) {
    const entry = subuser.whitelist.shift();
    const answer = await send(ctx, "DELETE", "/v1/whitelists/{id}", { params: { id: entry.id } });
    if (answer.status === 200 || answer.status === 204) changed(ctx, "whitelist", "deleted", at);
    return;
  }
  const ip = `198.51.100.${between(1, 254)}`;
  if (subuser.whitelist.some((entry) => entry.ip === ip)) return;
  const body = { subuser: subuser.id, product: "residential", ip, label: "soak" };
  const answer = await send(ctx, "POST", "/v1/whitelists", { body });
  if (answer.status === 201) {
    subuser.whitelist.push({ id: answer.body.id, ip });
    changed(ctx, "whitelist", "created", at);
  }
}

/**
 * A bandwidth order charged to the balance; one in ten sends an earlier order's Idempotency-Key and body again,
 * which must answer that same order without charging again.
 */
async function placeOrder(ctx, state) {
  if (state.replayable.length > 0 && Math.random() < 0.1) {
    const earlier = pick(state.replayable);
    const answer = await send(ctx, "POST", "/v1/orders", { body: earlier.body, idempotencyKey: earlier.key });
    ctx.book.replays.sent += 1;
    if (answer.body?.id === earlier.id && answer.headers.get("Idempotent-Replayed") === "true") {
      ctx.book.replays.same += 1;
    }
    return;
  }
  const body = { product: pick(["residential", "mobile"]), gb: between(1, 10) / 100 };
  const key = randomUUID();
  const order = expect(await send(ctx, "POST", "/v1/orders", { body, idempotencyKey: key }), 201, "order");
  ctx.book.orders.set(order.id, { product: body.product, totalMinor: Math.round(order.total_usd * 100) });
  state.orders.push(order.id);
  state.replayable.push({ id: order.id, key, body });
  if (state.replayable.length > 20) state.replayable.shift();
  if (state.orders.length > 200) state.orders.shift();
}

async function queryTraffic(ctx) {
  const query = { from: iso(ctx.startedAt - 3_600_000), to: iso(Date.now() + 60_000) };
  query.group_by = pick(["subuser", "hour", "region"]);
  await get(ctx, "/v1/{product}/traffic", { params: { product: products(ctx) }, query });
}

/** Lists sessions, keeping the ids of those that stay live a while (for `getSession`). */
async function listSessions(ctx, state) {
  const product = products(ctx);
  const answer = await get(ctx, "/v1/{product}/sessions", { params: { product }, query: { limit: "20" } });
  for (const session of answer.body?.data ?? []) {
    if (Date.parse(session.expires_at) > Date.now() + 120_000 && session.status === "active") {
      state.liveSessions.push({ id: session.id, product, expiresAt: Date.parse(session.expires_at) });
    }
  }
  state.liveSessions = state.liveSessions.slice(-50);
}

async function getSession(ctx, state) {
  const live = state.liveSessions.filter((session) => session.expiresAt > Date.now() + 60_000);
  if (live.length === 0) return;
  const session = pick(live);
  await get(ctx, "/v1/{product}/sessions/{id}", { params: { product: session.product, id: session.id } });
}

/**
 * Terminates a sticky session the load retired at least 30 s ago (its usage has arrived), while the population
 * grows; then sends its username's next request at once, which must open a new session with a new exit.
 */
async function terminateRetiredSession(ctx) {
  if (!growing(ctx, TERMINATION_CUTOFF_MS)) return;
  const retired = [...ctx.book.sessions.values()].find(
    (session) =>
      session.retiredAt &&
      session.firstUse &&
      !session.expiring &&
      !session.terminated &&
      !session.successor &&
      (session.misses ?? 0) < 3 &&
      Date.now() - session.retiredAt > 30_000,
  );
  if (!retired) return;
  const found = await get(ctx, "/v1/{product}/sessions", {
    params: { product: retired.product },
    query: { subuser: retired.subuser, session_id: retired.sessionId },
  });
  const session = (found.body?.data ?? []).find((listed) => holds(retired, listed) && listed.status === "active");
  if (!session) {
    retired.misses = (retired.misses ?? 0) + 1;
    return;
  }
  const params = { product: retired.product, id: session.id };
  const answer = await send(ctx, "DELETE", "/v1/{product}/sessions/{id}", { params });
  if (answer.status !== 200) return;
  retired.terminated = true;
  const next = successor(ctx, retired, "terminated");
  const subuser = ctx.setup.subusers.find((candidate) => candidate.id === retired.subuser);
  await proxyOnce(ctx, { subuser, product: retired.product, session: next });
}

/** Whether a listed session is the one of this book entry: it started while the entry was in use (±5 s). */
export function holds(entry, listed) {
  const startedAt = Date.parse(listed.started_at);
  return startedAt >= entry.firstSentAt - 5_000 && startedAt <= (entry.lastUse ?? entry.firstUse) + 5_000;
}

/**
 * Creates an API key and uses it once, or revokes the oldest once `MAX_EXTRA_KEYS` exist. Once the population is
 * fixed: uses a live one instead.
 */
async function churnApiKey(ctx, state) {
  if (!growing(ctx)) {
    if (state.keys.length === 0) return get(ctx, "/v1/api-keys/current");
    const key = pick(state.keys);
    await ctx.api.call("GET", "/v1/api-keys/{id}", { params: { id: key.id }, token: key.token });
    return;
  }
  const at = Date.now();
  if (state.keys.length >= MAX_EXTRA_KEYS) {
    const oldest = state.keys.shift();
    const answer = await send(ctx, "DELETE", "/v1/api-keys/{id}", { params: { id: oldest.id } });
    if (answer.status === 200 || answer.status === 204) changed(ctx, "api-key", "deleted", at);
    return;
  }
  const created = expect(
    await send(ctx, "POST", "/v1/api-keys", { body: { name: `soak-${state.tag}-${++state.seq}` } }),
    201,
    "create API key",
  );
  changed(ctx, "api-key", "created", at);
  state.keys.push({ id: created.id, token: created.token });
  await ctx.api.call("GET", "/v1/api-keys/{id}", { params: { id: created.id }, token: created.token });
}

// ── Proxied requests ───────────────────────────────────────────────────────────────────────────────────────

/** A response size: mostly small, some large. */
const responseSize = () => (Math.random() < 0.05 ? between(100_000, 250_000) : between(100, 20_000));

/** A node's 429 is sent again after its `Retry-After`, up to this long, as the spec asks clients to. */
const RETRY_AFTER_CAP_MS = 2_000;
const PROXY_ATTEMPTS = 5;

/**
 * One proxied request of a traffic sub-user through a random node: plain HTTP (GET, or POST with a body) or through
 * a `CONNECT` tunnel; a rotating username, or one of the sub-user's sticky sessions. A 5xx or a cut connection is
 * sent again (on a node that is up) until it succeeds, and a 429 after its `Retry-After`; every refusal is recorded
 * with the node that answered.
 */
async function proxyOnce(ctx, chosen = null) {
  const subuser = chosen?.subuser ?? pick(ctx.setup.subusers);
  const product = chosen?.product ?? pick(subuser.products);
  const session =
    chosen?.session ?? (subuser.sticky && Math.random() < 0.4 ? stickySession(ctx, subuser, product) : null);
  const username = session?.username ?? usernameOf(subuser, product);
  const tunnel = Math.random() < 0.2;
  const method = !tunnel && Math.random() < 0.25 ? "POST" : "GET";
  const request = {
    credentials: { username, password: subuser.password },
    method,
    size: responseSize(),
    body: method === "POST" ? randomBytes(between(1, 16_000)) : undefined,
    headers: ownerHeaders({ product, subuser: subuser.id, session: session?.track }),
  };
  const route = `${tunnel ? "CONNECT" : method} ${product} ${session ? "sticky" : "rotating"}`;
  const send = (node) => (tunnel ? tunnelledRequest : proxiedRequest)(node, ctx.target, request);
  const failed = [];
  if (session) session.firstSentAt ??= Date.now();
  for (let attempt = 1; ; attempt++) {
    const started = performance.now();
    const outcome = (await ctx.fleet.use((node) =>
      send(node).then(
        (answer) => ({ ...answer, node: node.id }),
        () => ({ status: "network", node: node.id }),
      ),
    )) ?? { status: "no node", node: null };
    ctx.metrics.record("proxy", route, outcome.status, performance.now() - started);
    const answer = { route, status: outcome.status, errorCode: outcome.errorCode ?? null, node: outcome.node };
    const failure = typeof outcome.status !== "number" || outcome.status >= 500;
    if (failure) failed.push({ kind: "proxy", ...answer, at: Date.now(), attempt });
    else if (outcome.status !== 200) ctx.book.proxyRefusals.push({ ...answer, at: Date.now(), attempt });
    const again = failure || outcome.status === 429;
    if (!again || attempt === PROXY_ATTEMPTS) {
      for (const entry of failed) ctx.metrics.failure({ ...entry, retried: outcome.status === 200 });
      if (outcome.status === 200 && session) {
        session.firstUse ??= Date.now();
        session.lastUse = Date.now();
        session.exits.add(outcome.exitIp ?? "none");
      }
      return;
    }
    await sleep(failure ? 500 : Math.min(RETRY_AFTER_CAP_MS, (outcome.retryAfterS ?? 1) * 1000));
  }
}

function usernameOf(subuser, product, session = null) {
  const type = product === "mobile" ? "mob" : "res";
  const sticky = session ? `-session-${session}-sesstime-${SESSTIME_MINUTES[product]}` : "";
  return `user_${subuser.name}-type-${type}-region-us${sticky}`;
}

/**
 * One of the sub-user's live sticky sessions of `product` (null: none in use now). While the population grows, one
 * used for `SESSION_USE_MS` is retired and a new username is made when fewer than `SESSIONS_PER_SUBUSER` are live;
 * at any time one near its end is paused, and its username's next request after its end opens the next session.
 */
function stickySession(ctx, subuser, product) {
  const now = Date.now();
  const mine = [...ctx.book.sessions.values()].filter(
    (session) => session.subuser === subuser.id && session.product === product,
  );
  for (const session of mine) {
    if (session.retiredAt) continue;
    if (growing(ctx) && session.firstUse && now - session.firstUse > SESSION_USE_MS) session.retiredAt = now;
    else if (session.firstSentAt && now >= session.firstSentAt + session.sesstime * 60_000 - PAUSE_BEFORE_END_MS) {
      session.retiredAt = now;
      session.expiring = true;
    }
  }
  const live = mine.filter((session) => !session.retiredAt);
  for (const session of mine) {
    const ended = session.firstUse && now >= session.firstUse + session.sesstime * 60_000 + RESUME_AFTER_END_MS;
    if (session.expiring && !session.successor && ended) live.push(successor(ctx, session, "expired"));
  }
  if (growing(ctx, NEW_SESSION_CUTOFF_MS) && live.length < SESSIONS_PER_SUBUSER) {
    const sessionId = `soak${now.toString(36)}${randomBytes(3).toString("hex")}`;
    const username = usernameOf(subuser, product, sessionId);
    live.push(bookSession(ctx, { username, product, subuser: subuser.id, sessionId, generation: 0, why: "new" }));
  }
  return live.length > 0 ? pick(live) : null;
}

/** The session a username's next request opens after `previous` was terminated (next generation) or expired. */
function successor(ctx, previous, why) {
  const { username, product, subuser, sessionId } = previous;
  const generation = previous.generation + (why === "terminated" ? 1 : 0);
  const next = bookSession(ctx, { username, product, subuser, sessionId, generation, why, previous: previous.track });
  previous.successor = next.track;
  return next;
}

function bookSession(ctx, fields) {
  const n = [...ctx.book.sessions.values()].filter((session) => session.username === fields.username).length;
  const session = {
    track: `${fields.username}#${n}`,
    previous: null,
    successor: null,
    ...fields,
    sesstime: SESSTIME_MINUTES[fields.product],
    firstSentAt: null,
    firstUse: null,
    lastUse: null,
    exits: new Set(),
    retiredAt: null,
    expiring: false,
    terminated: false,
  };
  ctx.book.sessions.set(session.track, session);
  return session;
}

// ── Usage posted directly ──────────────────────────────────────────────────────────────────────────────────

/**
 * A usage batch posted with the gateway token, as a gateway would. Two in five are posted twice, the exact same
 * batch (at once or after the first answer): the API must count it once and answer the copy `duplicate: true`.
 */
async function postDirectUsage(ctx, state) {
  const subuser = pick(ctx.setup.subusers);
  const product = pick(subuser.products);
  const id = `soak${state.tag}${++state.seq}`;
  const records = Array.from({ length: between(3, 12) }, (_, i) => ({
    request_id: `req_${id}x${i}`,
    ts: new Date().toISOString(),
    product,
    username: usernameOf(subuser, product),
    dest_ip: null,
    method: "GET",
    target_host: "127.0.0.1",
    status: 200,
    bytes_in: between(500, 50_000),
    bytes_out: between(100, 2_000),
    exit_ip: product === "mobile" ? "203.0.113.77" : "198.51.100.77",
    exit_geo: "us/ca/los-angeles",
    exit_asn: 64500,
    carrier_name: product === "mobile" ? "Soak Mobile" : null,
    tag: "soak-direct",
    error_code: null,
    repinned: false,
    client_ip: "127.0.0.1",
  }));
  const batch = { batch_id: `soak-${id}`, records };
  const post = () => ctx.api.call("POST", "/internal/gateway/usage", { token: ctx.gatewayToken, body: batch });
  const copy = Math.random() < 0.4;
  const answers = copy && Math.random() < 0.5 ? await Promise.all([post(), post()]) : [await post()];
  if (copy && answers.length === 1) answers.push(await post());
  if (answers.some((answer) => answer.status !== 202)) throw new Error(`usage batch: ${answers.map((a) => a.status)}`);
  const entry = ctx.book.direct.get(`${product} ${subuser.id}`) ?? { bytesIn: 0, bytesOut: 0, requests: 0 };
  for (const record of records) {
    entry.bytesIn += record.bytes_in;
    entry.bytesOut += record.bytes_out;
    entry.requests += 1;
  }
  ctx.book.direct.set(`${product} ${subuser.id}`, entry);
  if (copy) {
    ctx.book.directCopies.sent += 1;
    if (answers.filter((answer) => answer.body.duplicate === true).length === 1) ctx.book.directCopies.duplicate += 1;
  }
}

// ── Reports ────────────────────────────────────────────────────────────────────────────────────────────────

const REPORT_TYPES = ["traffic", "subusers", "invoices"];

/** Runs the next report (yesterday and today), waits for it, downloads its file. */
async function runReport(ctx, state) {
  const type = REPORT_TYPES[state.seq % REPORT_TYPES.length];
  const file = await runAndDownload(ctx, ctx.setup.reports[type], Date.now() - DAY_MS);
  if (file !== null && file.length === 0 && type !== "invoices") throw new Error(`${type} report: empty file`);
}

/**
 * Runs report `id` over the UTC days from `fromMs` to today, waits for it (polling the run) and downloads its file
 * through its signed link. Returns the file's text, or null when the run failed or did not finish in 2 minutes.
 */
export async function runAndDownload(ctx, id, fromMs) {
  const day = (ms) => new Date(ms).toISOString().slice(0, 10);
  const body = { from: day(fromMs), to: day(Date.now()) };
  const accepted = expect(await send(ctx, "POST", "/v1/reports/{id}/run", { params: { id }, body }), 202, "run");
  ctx.book.reports.requested += 1;
  const deadline = Date.now() + 120_000;
  let run;
  do {
    await sleep(1000);
    run = expect(await get(ctx, "/v1/reports/runs/{id}", { params: { id: accepted.run_id } }), 200, "report run");
  } while (run.status !== "completed" && run.status !== "failed" && Date.now() < deadline);
  if (run.status !== "completed") {
    ctx.book.reports.failed += 1;
    return null;
  }
  ctx.book.reports.completed += 1;
  const link = new URL(run.download_url);
  const path = link.pathname.replace(accepted.run_id, "{id}");
  const download = await ctx.api.call("GET", path, { params: { id: accepted.run_id }, query: link.searchParams });
  if (download.status !== 200) throw new Error(`report download: ${download.status}`);
  ctx.book.reports.downloaded += 1;
  return typeof download.body === "string" ? download.body : JSON.stringify(download.body);
}

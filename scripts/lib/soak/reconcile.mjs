// The end of a soak: once usage has settled, what the API shows against what the soak did, exactly. Expected figures
// come from the soak's own records (the target server's byte counts, the usage it posted, the orders it made);
// every line is `{check, expected, got, ok}`. Figures that settle later (pools at least every 5 minutes, webhooks
// with the next cron run) are polled until they match or their time is up.
import { sleep } from "../../../bench/http.mjs";
import { holds, runAndDownload } from "./load.mjs";

const TRAFFIC_WAIT_MS = 120_000;
/** Pools settle at least every 5 minutes while usage arrives, and a minute after it stops. */
const POOL_WAIT_MS = 7 * 60_000;
const DELIVERY_WAIT_MS = 120_000;
const GB = 1e9;

export async function reconcile(ctx) {
  const lines = [];
  const line = (check, expected, got) => {
    const entry = { check, expected, got, ok: JSON.stringify(expected) === JSON.stringify(got) };
    lines.push(entry);
    return entry;
  };
  const expected = expectedUsage(ctx);
  const get = async (template, options) => {
    const answer = await ctx.api.call("GET", template, { token: ctx.setup.token, ...options });
    if (answer.status !== 200) throw new Error(`${template}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };

  // Traffic per product and sub-user, until it matches (the last usage may still be in the queue).
  const range = {
    from: new Date(ctx.startedAt - 3_600_000).toISOString(),
    to: new Date(Date.now() + 3_600_000).toISOString(),
  };
  const trafficOf = async () => {
    const got = new Map();
    for (const product of ["residential", "mobile"]) {
      const answer = await get("/v1/{product}/traffic", {
        params: { product },
        query: { ...range, group_by: "subuser" },
      });
      for (const row of answer.rows) {
        got.set(`${product} ${row.subuser}`, {
          bytesIn: row.bytes_in,
          bytesOut: row.bytes_out,
          requests: row.requests,
        });
      }
    }
    return got;
  };
  const traffic = await until(trafficOf, (got) => sameUsage(expected, got), TRAFFIC_WAIT_MS);
  for (const key of new Set([...expected.keys(), ...traffic.keys()])) {
    const want = expected.get(key) ?? zero();
    const got = traffic.get(key) ?? zero();
    if (want.requests === 0 && got.requests === 0) continue;
    line(`traffic ${labelOf(ctx, key)}: bytes in / out / requests`, figures(want), figures(got));
  }

  // Sticky sessions: every one opened and still live is listed with its exact bytes, requests and exit.
  for (const entry of await checkSessions(ctx, get)) line(...entry);

  // Sub-users' months (every product's bytes), then the pools (settled at least every 5 minutes).
  for (const subuser of ctx.setup.subusers) {
    const want = subuser.products.reduce((sum, product) => sum + bytesOf(expected.get(`${product} ${subuser.id}`)), 0);
    const got = await get("/v1/subusers/{id}", { params: { id: subuser.id } });
    line(`sub-user ${subuser.label}: traffic_used_gb (bytes)`, want, Math.round(got.traffic_used_gb * GB));
  }
  for (const product of ["residential", "mobile"]) {
    const want = [...expected].filter(([key]) => key.startsWith(`${product} `)).reduce((s, [, u]) => s + bytesOf(u), 0);
    const read = async () => Math.round((await get("/v1/{product}/balance", { params: { product } })).gb_used * GB);
    line(`pool ${product}: gb_used (bytes)`, want, await until(read, (got) => got === want, POOL_WAIT_MS));
  }

  // Money: the orders, the balance, and the ledger (the invoices report: every ledger line).
  const orders = await allPages(get, "/v1/orders");
  const madeMinor = [...ctx.book.orders.values()].reduce((sum, order) => sum + order.totalMinor, 0);
  line("orders: count", ctx.book.orders.size, orders.length);
  line(
    "orders: each as made (id and total)",
    ctx.book.orders.size,
    orders.filter((order) => ctx.book.orders.get(order.id)?.totalMinor === Math.round(order.total_usd * 100)).length,
  );
  const balanceMinor = Math.round((await get("/v1/users/me")).balance.amount * 100);
  line("balance (cents): opening − orders' charges", ctx.book.openingMinor - madeMinor, balanceMinor);
  const ledgerFile = await runAndDownload(ctx, ctx.setup.reports.invoices, ctx.startedAt);
  const ledger = (ledgerFile ?? "")
    .split("\n")
    .filter(Boolean)
    .map((text) => JSON.parse(text));
  const charges = ledger.filter((entry) => entry.reference_type === "order");
  line("ledger: order charges (lines)", ctx.book.orders.size, charges.length);
  line(
    "ledger: each charge = −order total",
    ctx.book.orders.size,
    charges.filter((entry) => -Math.round(entry.amount * 100) === ctx.book.orders.get(entry.reference)?.totalMinor)
      .length,
  );
  line(
    "ledger: lines other than charges (the opening credit)",
    [ctx.book.openingMinor],
    ledger.filter((entry) => entry.reference_type !== "order").map((entry) => Math.round(entry.amount * 100)),
  );
  line(
    "ledger: sum of lines = balance (cents)",
    balanceMinor,
    ledger.reduce((s, e) => s + Math.round(e.amount * 100), 0),
  );

  // What the soak checked along the way, and deliveries (webhooks leave with the next cron run).
  line("orders replayed by Idempotency-Key: the same order, not charged", ctx.book.replays.sent, ctx.book.replays.same);
  line(
    "usage batches posted twice: one answered duplicate",
    ctx.book.directCopies.sent,
    ctx.book.directCopies.duplicate,
  );
  const webhooks = await until(
    async () => ctx.receiver.count("/events", "order.completed"),
    (got) => got.distinct >= ctx.book.orders.size,
    DELIVERY_WAIT_MS,
  );
  line("webhooks: order.completed events delivered (distinct)", ctx.book.orders.size, webhooks.distinct);
  line("webhooks: deliveries failing signature checks", 0, webhooks.invalid);
  const { reports } = ctx.book;
  line("report runs: completed of requested", reports.requested, reports.completed);
  line("report runs: files downloaded", reports.completed, reports.downloaded);
  const pushed = await until(
    async () => ctx.receiver.count("/reports", "report_run.completed"),
    (got) => got.distinct >= reports.completed,
    DELIVERY_WAIT_MS,
  );
  line("report runs: pushed to the webhook destination (distinct)", reports.completed, pushed.distinct);
  line("target: connections nobody owned", 0, ctx.target.unattributed.connections);
  return lines;
}

/** What the API should count, per `product subuser`: what the target served, and the usage posted directly. */
function expectedUsage(ctx) {
  const expected = new Map();
  for (const source of [ctx.target.usage, ctx.book.direct]) {
    for (const [key, usage] of source) {
      const entry = expected.get(key) ?? zero();
      entry.bytesIn += usage.bytesIn;
      entry.bytesOut += usage.bytesOut;
      entry.requests += usage.requests;
      expected.set(key, entry);
    }
  }
  return expected;
}

/**
 * Sticky sessions, decided at the gateway nodes and named by the account's store from their usage. Each session the
 * soak opened (a request answered 200; a username opens a new one after its session was terminated or expired) is
 * listed once its first usage is applied: with the target's bytes and requests, its status, and the one exit every
 * node's answers named (not repinned: the soak's nodes never lose an exit); not listed once expired (its end is
 * its start plus its `sesstime`, the start between its first request's sending and answer; near the end either).
 * The session a username opens after a DELETE has a new exit; after an expiry, the same exit (same key and
 * generation). A listed session the soak did not open is a mismatch.
 */
async function checkSessions(ctx, get) {
  const read = async () => {
    const listed = [];
    for (const product of ["residential", "mobile"])
      listed.push(...(await allPages(get, "/v1/{product}/sessions", { product })));
    return listed;
  };
  const compare = (listed) => {
    const now = Date.now();
    const byName = Map.groupBy(listed, (session) => `${session.subuser} ${session.session_id}`);
    const matched = new Set();
    const problems = { usage: [], exits: [], terminated: [], expired: [], unknown: [] };
    const counts = { opened: 0, listed: 0, terminated: 0, afterDelete: 0, afterExpiry: 0, newExit: 0, sameExit: 0 };
    const exitOf = (entry) => (entry.exits.size === 1 ? [...entry.exits][0] : null);
    const opened = [...ctx.book.sessions.values()].filter((session) => session.firstUse);
    for (const entry of opened) {
      counts.opened += 1;
      if (entry.why === "terminated") counts.afterDelete += 1;
      if (entry.why === "expired") counts.afterExpiry += 1;
      const name = `${entry.sessionId}#${entry.track.split("#").at(-1)}`;
      const found = (byName.get(`${entry.subuser} ${entry.sessionId}`) ?? []).filter((listed) => holds(entry, listed));
      const earliestEnd = entry.firstSentAt + entry.sesstime * 60_000;
      const latestEnd = entry.firstUse + entry.sesstime * 60_000;
      if (found.length > 1) problems.usage.push(`${name}: ${found.length} sessions listed for one`);
      const session = found[0];
      if (!session) {
        if (entry.terminated || now < earliestEnd - 60_000) problems.usage.push(`${name}: not listed`);
        continue;
      }
      matched.add(session.id);
      counts.listed += 1;
      if (session.status === "active" && now > latestEnd + 60_000)
        problems.expired.push(`${name}: listed after its end`);
      const served = ctx.target.sessions.get(entry.track) ?? { bytesIn: 0, bytesOut: 0, requests: 0 };
      const want = { bytes: served.bytesIn + served.bytesOut, requests: served.requests };
      const got = { bytes: session.bytes_used, requests: session.requests };
      if (want.bytes !== got.bytes || want.requests !== got.requests) {
        problems.usage.push(`${name}: ${JSON.stringify(want)} ≠ ${JSON.stringify(got)}`);
      }
      if (entry.terminated) counts.terminated += 1;
      if ((entry.terminated ? "terminated" : "active") !== session.status) {
        problems.terminated.push(`${name}: ${session.status}, expected ${entry.terminated ? "terminated" : "active"}`);
      }
      const exit = exitOf(entry);
      if (exit === null || exit !== session.exit_ip || session.repinned) {
        problems.exits.push(
          `${name}: answers named ${[...entry.exits].join(" ")}; listed ${session.exit_ip}${session.repinned ? " repinned" : ""}`,
        );
      }
      const previous = entry.previous && ctx.book.sessions.get(entry.previous);
      if (previous && exit !== null) {
        const before = exitOf(previous);
        if (entry.why === "terminated" && exit !== before) counts.newExit += 1;
        else if (entry.why === "expired" && exit === before) counts.sameExit += 1;
        else
          problems.exits.push(
            `${name}: after ${entry.why === "terminated" ? "DELETE" : "expiry"}: exit ${before} → ${exit}`,
          );
      }
    }
    for (const session of listed) {
      if (!matched.has(session.id))
        problems.unknown.push(`${session.id} (${session.subuser} ${session.session_id}): listed, never opened`);
    }
    return { counts, problems };
  };
  const clean = ({ problems }) => Object.values(problems).every((list) => list.length === 0);
  const { counts, problems } = compare(await until(read, (listed) => clean(compare(listed)), TRAFFIC_WAIT_MS));
  const few = (list) => list.slice(0, 10);
  return [
    [
      `sessions: opened ${counts.opened} (${counts.afterDelete} after a DELETE, ${counts.afterExpiry} after an expiry), listed ${counts.listed}: each listed once with its bytes and requests, none listed unopened`,
      [],
      few([...problems.usage, ...problems.unknown]),
    ],
    [
      `sessions: ${counts.terminated} terminated listed terminated, none else; none listed after its end`,
      [],
      few([...problems.terminated, ...problems.expired]),
    ],
    [
      "sessions: one exit each, the nodes' answers' and the listing's, none repinned; a new exit after DELETE, the same after expiry",
      [],
      few(problems.exits),
    ],
    [
      "sessions: a username's next request after DELETE opened a new session with a new exit (opened / new exit)",
      counts.afterDelete,
      counts.newExit,
    ],
  ];
}

/** Every item of a paginated list. */
async function allPages(get, template, params = {}) {
  const items = [];
  let cursor;
  do {
    const page = await get(template, { params, query: { limit: "100", ...(cursor ? { cursor } : {}) } });
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

/** Reads until `holds(value)` or `timeoutMs` passed; the last value read. */
async function until(read, holds, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value) || Date.now() > deadline) return value;
    await sleep(2000);
  }
}

function sameUsage(expected, got) {
  for (const key of new Set([...expected.keys(), ...got.keys()])) {
    const want = expected.get(key) ?? zero();
    const have = got.get(key) ?? zero();
    if (JSON.stringify(figures(want)) !== JSON.stringify(figures(have))) return false;
  }
  return true;
}

const zero = () => ({ bytesIn: 0, bytesOut: 0, requests: 0 });
const figures = (usage) => [usage.bytesIn, usage.bytesOut, usage.requests];
const bytesOf = (usage) => (usage ? usage.bytesIn + usage.bytesOut : 0);

function labelOf(ctx, key) {
  const [product, id] = key.split(" ");
  return `${product} ${ctx.setup.subusers.find((subuser) => subuser.id === id)?.label ?? id}`;
}

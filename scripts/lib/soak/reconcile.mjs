// The end of a soak: once usage has settled, what the API shows against what the soak did, exactly. Expected figures
// come from the soak's own records (the target server's byte counts, the usage it posted, the orders it made);
// every line is `{check, expected, got, ok}`. Figures that settle later (pools at least every 5 minutes, webhooks
// with the next cron run) are polled until they match or their time is up.
import { sleep } from "../../../bench/http.mjs";
import { runAndDownload } from "./load.mjs";

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

  // Sticky sessions: every one opened and still live is listed with its exact bytes and requests.
  line(...(await checkSessions(ctx, get)));

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
 * Each sticky session the soak opened (a request answered 200): listed with the target's bytes and requests while
 * it lives; not listed once expired (after its `sesstime` from about its first request; one whose end is within a
 * minute of now may be either). A listed session the soak did not open is a mismatch.
 */
async function checkSessions(ctx, get) {
  const read = async () => {
    const listed = new Map();
    for (const product of ["residential", "mobile"]) {
      for (const session of await allPages(get, `/v1/{product}/sessions`, { product })) {
        listed.set(`${session.subuser} ${session.session_id}`, session);
      }
    }
    return listed;
  };
  const compare = (listed) => {
    const problems = [];
    let live = 0;
    const opened = [...ctx.book.sessions.values()].filter((session) => session.firstUse);
    for (const session of opened) {
      const found = listed.get(`${session.subuser} ${session.sessionId}`);
      const served = ctx.target.sessions.get(session.username);
      const endsAt = session.firstUse + session.sesstime * 60_000;
      if (!found) {
        if (Date.now() < endsAt - 60_000) problems.push(`${session.sessionId}: not listed`);
        continue;
      }
      live += 1;
      const want = { bytes: served.bytesIn + served.bytesOut, requests: served.requests };
      const got = { bytes: found.bytes_used, requests: found.requests };
      if (want.bytes !== got.bytes || want.requests !== got.requests) {
        problems.push(`${session.sessionId}: ${JSON.stringify(want)} ≠ ${JSON.stringify(got)}`);
      }
      if (session.terminated && found.status !== "terminated") problems.push(`${session.sessionId}: not terminated`);
    }
    const mine = new Set(opened.map((session) => `${session.subuser} ${session.sessionId}`));
    for (const key of listed.keys()) if (!mine.has(key)) problems.push(`${key}: listed, never opened`);
    return { opened: opened.length, live, problems };
  };
  const result = compare(await until(read, (listed) => compare(listed).problems.length === 0, TRAFFIC_WAIT_MS));
  return [
    `sessions: opened ${result.opened}, listed live ${result.live}: mismatches`,
    [],
    result.problems.slice(0, 10),
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

// `npm run seed:large`: a reseller's account at scale in a running `npm run dev`, to try the console and the API at
// that size: 5,000 sub-users, 20,000 orders, 10,000 sticky sessions and 90 days of traffic (one record a day per
// sub-user, some failing with the gateway's codes). Its key is kept in the state folder and printed.
//
//   npm run seed:large [-- --base http://localhost:8787 --persist-to <dir> --subusers 5000 --orders 20000
//                         --sessions 10000 --days 90]
//
// Sessions live 30 minutes (the gateway's longest for residential), so they are listed for half an hour after the
// seeding; running it again renews them (the same session names) and tops up what is missing, adding nothing twice.
// Everything goes through the API and the gateway's usage endpoint, as a real reseller's would.
import path from "node:path";
import { parseArgs } from "node:util";
import { BENCH_LIMITS } from "../bench/accounts.mjs";
import { apiClient, inParallel } from "../bench/http.mjs";
import {
  batchBodies,
  postBatches,
  random,
  requestId,
  rotatingUsername,
  sessionExit,
  sessionUsername,
  totalRequests,
  usageRecord,
  waitForAbsorbed,
} from "../bench/usage.mjs";
import { ensureAccount, prepare } from "./lib/local-worker.mjs";

const { values: options } = parseArgs({
  options: {
    base: { type: "string", default: "http://localhost:8787" },
    "persist-to": { type: "string" },
    subusers: { type: "string", default: "5000" },
    orders: { type: "string", default: "20000" },
    sessions: { type: "string", default: "10000" },
    days: { type: "string", default: "90" },
    concurrency: { type: "string", default: "16" },
  },
});
const counts = {
  subusers: Number(options.subusers),
  orders: Number(options.orders),
  sessions: Number(options.sessions),
  days: Number(options.days),
};
for (const [name, count] of Object.entries(counts)) {
  if (!Number.isInteger(count) || count < 0 || count > 1_000_000) throw new Error(`--${name}: 0 to 1,000,000`);
}
// The traffic endpoint answers at most 90 days at once: the seeding is checked in one query.
if (counts.days > 90) throw new Error("--days: at most 90");
const concurrency = Number(options.concurrency);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** The account's orders: 1 GB each, so 20,000 of them cost $90,000 of the seeded balance. */
const ORDER_GB = 1;

const persistTo = options["persist-to"] && path.resolve(options["persist-to"]);
const vars = prepare({ persistTo });
const api = apiClient(options.base);
const started = performance.now();
const step = (what) => console.log(`  ${what} (${((performance.now() - started) / 1000).toFixed(0)} s)`);

const reseller = await ensureAccount(options.base, vars.ADMIN_TOKEN, {
  email: "reseller@example.com",
  plan: "enterprise",
  balance_usd: 1_000_000,
  topUpTo: 1_000_000,
  limits: BENCH_LIMITS,
  file: "reseller-account.json",
  stateDir: persistTo,
});
const auth = { Authorization: `Bearer ${reseller.token}` };
console.log(`Seeding ${reseller.email} (${reseller.accountId}):`);

const subusers = await seedSubusers();
step(`${subusers.length} sub-users`);
// A second seeding tops the orders up to the count rather than adding as many again.
const ordersBefore = await countAll("/v1/orders");
await inParallel(Array.from({ length: Math.max(0, counts.orders - ordersBefore) }), concurrency, () =>
  api.post("/v1/orders", auth, { product: "residential", gb: ORDER_GB }),
);
step(`${Math.max(counts.orders, ordersBefore)} orders`);
const seededAt = Date.now();
const window = { from: seededAt - counts.days * DAY + MINUTE, to: seededAt + MINUTE };
// A second seeding adds sessions (they lapse) but not the history again.
const before = await totalRequests(api, auth, window.from, window.to);
// Sessions first: they are the part that lapses (30 minutes), and the history takes minutes to absorb locally.
const records = [...sessionRecords(seededAt), ...(before === 0 ? historyRecords(seededAt) : [])];
const posted = await postBatches(api, vars.GATEWAY_TOKEN, batchBodies(records, `seed-${seededAt.toString(36)}`), 8);
// A local worker absorbs a few hundred records a second: the 90 days of 5,000 sub-users take a quarter of an hour.
await waitForAbsorbed(api, [{ auth, ...window, requests: before + records.length }], {
  timeoutMs: 3_600_000,
  intervalMs: 5_000,
});
step(
  `${posted.accepted} usage records absorbed: ${before === 0 ? `${counts.days} days of traffic and ` : ""}${counts.sessions} sessions`,
);

console.log(`
  Reseller key  ${reseller.token}
  Console       ${options.base}/console/  (sign in with the key above)
`);

/** Every item of one of the account's lists, through its cursor. */
async function listAll(listPath) {
  const items = [];
  for (let cursor = null; ; ) {
    const page = await api.get(`${listPath}?limit=100${cursor ? `&cursor=${cursor}` : ""}`, auth);
    items.push(...page.data);
    cursor = page.next_cursor;
    if (!cursor) return items;
  }
}

async function countAll(listPath) {
  return (await listAll(listPath)).length;
}

/** Sub-users `customer-0000`… (those already there from an earlier seeding are kept), oldest first. */
async function seedSubusers() {
  const existing = await listAll("/v1/subusers");
  const have = new Set(existing.map((subuser) => subuser.label));
  const label = (i) => `customer-${String(i).padStart(4, "0")}`;
  const missing = Array.from({ length: counts.subusers }, (_, i) => label(i)).filter((name) => !have.has(name));
  const created = await inParallel(missing, concurrency, (name) =>
    api.post("/v1/subusers", auth, { label: name, products: ["residential"] }),
  );
  return [...existing, ...created].filter((subuser) => subuser.label.startsWith("customer-")).slice(0, counts.subusers);
}

/** One record a day per sub-user over the days before the seeding, at a time of day of its own (inside the window). */
function historyRecords(at) {
  const rng = random(0x5eed);
  const runTag = at.toString(36);
  const records = [];
  subusers.forEach((subuser, s) => {
    for (let day = 1; day <= counts.days; day++) {
      const ts = at - day * DAY + 2 * MINUTE + ((s * 7_919_000) % (DAY - 4 * MINUTE));
      records.push(
        usageRecord(rng, { requestId: requestId(runTag, s, day), username: rotatingUsername(subuser.name), ts }),
      );
    }
  });
  return records;
}

/** One sticky session each, spread over the sub-users, started in the last minutes (sessions live 30 minutes). */
function sessionRecords(at) {
  const rng = random(0x5e55);
  const runTag = `${at.toString(36)}s`;
  return Array.from({ length: counts.sessions }, (_, i) => {
    const subuser = subusers[i % subusers.length];
    const username = sessionUsername(subuser.name, `seed${i.toString(36)}`);
    return {
      ...usageRecord(rng, {
        requestId: requestId(runTag, 0, i),
        username,
        ts: at - (i % 600) * 1000,
        exit: sessionExit(rng),
      }),
      session_gen: 0,
    };
  });
}

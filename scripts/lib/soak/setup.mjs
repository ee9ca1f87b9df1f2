// The soak's account: a new enterprise account (API limits lifted, so the soak measures the API and not its rate
// limiter), both pools bought, the sub-users that carry proxied traffic, a webhook endpoint and report definitions
// whose deliveries go to the loopback receiver. Set-up calls are not part of the measured load.
import { randomBytes } from "node:crypto";
import { BENCH_LIMITS } from "../../../bench/accounts.mjs";
import { apiClient } from "../../../bench/http.mjs";
import { adminCall } from "../local-worker.mjs";

export const OPENING_USD = 1_000_000;
/** GB of each pool bought at the start: far more than a soak carries. */
const POOL_GB = { residential: 1_000, mobile: 200 };
const LIMITS = { concurrent_max: 500, rps_max: 500 };

/**
 * Sub-users that carry traffic: residential ones (one with a monthly cap, so its month is metered against it), a
 * mobile one, and one with both products (its `traffic_used_gb` sums them). `sticky`: some of its requests use
 * sticky sessions.
 */
const TRAFFIC_SUBUSERS = [
  { label: "soak-res-a", products: ["residential"], sticky: true },
  { label: "soak-res-b", products: ["residential"], sticky: false },
  { label: "soak-res-capped", products: ["residential"], sticky: true, traffic_limit_gb: 5_000 },
  { label: "soak-mob", products: ["mobile"], sticky: true },
  { label: "soak-both", products: ["residential", "mobile"], sticky: false },
];

export async function setUpAccount(base, { adminToken, receiver, book }) {
  const api = apiClient(base);
  const email = `soak-${Date.now().toString(36)}@example.com`;
  const account = await adminCall(base, adminToken, "POST", "/accounts", {
    email,
    plan: "enterprise",
    balance_usd: OPENING_USD,
  });
  await adminCall(base, adminToken, "PATCH", `/accounts/${account.id}`, { limits: BENCH_LIMITS });
  const key = await adminCall(base, adminToken, "POST", `/accounts/${account.id}/api-keys`, {});
  const auth = { Authorization: `Bearer ${key.token}` };
  book.openingMinor = OPENING_USD * 100;

  // The endpoint first: every order's event is delivered to it.
  const endpoint = await api.post("/v1/webhook-endpoints", auth, {
    url: receiver.url("/events"),
    events: ["order.completed"],
    description: "soak receiver",
  });
  receiver.setSecret("/events", endpoint.secret);
  for (const [product, gb] of Object.entries(POOL_GB)) {
    const order = await api.post("/v1/orders", auth, { product, gb });
    book.orders.set(order.id, { product, totalMinor: Math.round(order.total_usd * 100) });
  }
  const subusers = [];
  for (const { sticky, ...fields } of TRAFFIC_SUBUSERS) {
    const created = await api.post("/v1/subusers", auth, { ...fields, ...LIMITS });
    subusers.push({ ...created, sticky });
  }

  const reportSecret = `whsec_${randomBytes(32).toString("base64")}`;
  receiver.setSecret("/reports", reportSecret);
  const destination = { type: "webhook", url: receiver.url("/reports"), signing_secret: reportSecret };
  const reports = {};
  for (const [type, format] of [
    ["traffic", "json"],
    ["subusers", "csv"],
    ["invoices", "json"],
  ]) {
    reports[type] = (await api.post("/v1/reports", auth, { name: `soak ${type}`, type, format, destination })).id;
  }
  return { accountId: account.id, token: key.token, subusers, endpointId: endpoint.id, reports };
}

// Accounts and sub-users for the benchmark. Accounts are enterprise ones with a large balance and API limits
// raised out of the way (the benchmark measures the API's work, not its rate limiter's refusals); each buys a
// residential pool first, since the gateway refuses residential traffic without one (402 bandwidth-exhausted).
import { adminCall } from "../scripts/lib/local-worker.mjs";
import { inParallel } from "./http.mjs";

export const BENCH_LIMITS = {
  api_burst_per_min: 1_000_000_000,
  api_daily: null,
  concurrent: { residential: 10_000 },
  rps: { residential: 10_000 },
};
/** Residential GB each benchmark account buys: far more than a run reports (a few GB), at $4.50/GB. */
export const POOL_GB = 10_000;

/**
 * A new account for this run only (`label` names it), so that runs on persisted state (BENCH_STATE=disk) do not
 * see each other's sub-users or traffic. Returns its id and API-key headers, its pool bought.
 */
export async function freshAccount(api, adminToken, label) {
  const email = `${label}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}@example.com`;
  const account = await adminCall(api.base, adminToken, "POST", "/accounts", {
    email,
    plan: "enterprise",
    balance_usd: 1_000_000,
  });
  await adminCall(api.base, adminToken, "PATCH", `/accounts/${account.id}`, { limits: BENCH_LIMITS });
  const key = await adminCall(api.base, adminToken, "POST", `/accounts/${account.id}/api-keys`, {});
  const auth = { Authorization: `Bearer ${key.token}` };
  await buyBandwidth(api, auth);
  return { id: account.id, auth };
}

/** Tops the account's residential pool up by `gb` (a bandwidth order, debited from the balance). */
export function buyBandwidth(api, auth, gb = POOL_GB) {
  return api.post("/v1/orders", auth, { product: "residential", gb });
}

/** `count` residential sub-users labelled `{prefix}-{i}`, created `concurrency` at a time; with their names. */
export function createSubusers(api, auth, { count, prefix, concurrency = 8 }) {
  const indexes = Array.from({ length: count }, (_, i) => i);
  return inParallel(indexes, concurrency, (i) =>
    api.post("/v1/subusers", auth, {
      label: `${prefix}-${i}`,
      products: ["residential"],
      concurrent_max: 10_000,
      rps_max: 10_000,
    }),
  );
}

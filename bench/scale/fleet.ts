import type { OwnedRecord } from "../../src/domain/traffic/aggregate";
import type { UsageRecord } from "../../src/domain/traffic/usage-records";

/**
 * The simulated fleet: 10,000 accounts × 1,000 sub-users; each account's share of gateway traffic follows a mix
 * (Zipf over the accounts' ranks, or uniform), spread evenly over its sub-users. A sub-user exits in one region and
 * ASN (the "narrow" case of the scale plan) and connects from one client block, a fifth of its requests use one of
 * its two sticky sessions (each lives 30 minutes, decided at the node), and one sub-user in 20 has a
 * monthly cap.
 */
export const ACCOUNTS = 10_000;
export const SUBUSERS = 1_000;
/**
 * Records per gateway POST, each a mix of its own: a full batch (1,000), the local gateway's flush (500), and the
 * small batches of a fleet of many nodes (100).
 */
export const BATCH_SIZES = [1_000, 500, 100];
const SESSION_SHARE = 0.2;
/** One sub-user in 20 has a monthly cap (D1 keeps capped sub-users' months). */
export const CAPPED_EVERY = 20;
const ERROR_SHARE = 0.04;
const REGIONS = ["us", "gb", "de", "fr", "br", "jp", "in", "ca", "au", "nl"];
const HOSTS = ["example.com", "shop.example.net", "api.example.org", "news.example.com", "cdn.example.io"];

export type Mix = { name: string; zipf: number | null };
export const MIXES: Mix[] = [
  { name: "Zipf s = 1.0", zipf: 1.0 },
  { name: "Zipf s = 1.2", zipf: 1.2 },
  { name: "uniform", zipf: null },
];

/** Each account's share of all traffic, by rank (index 0 = rank 1). */
export function accountShares(mix: Mix): Float64Array {
  const shares = new Float64Array(ACCOUNTS);
  let sum = 0;
  for (let i = 0; i < ACCOUNTS; i++) {
    shares[i] = mix.zipf === null ? 1 : 1 / (i + 1) ** mix.zipf;
    sum += shares[i] as number;
  }
  for (let i = 0; i < ACCOUNTS; i++) shares[i] = (shares[i] as number) / sum;
  return shares;
}

/** A seeded PRNG (mulberry32): every run simulates the same traffic. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Draws account ranks by their shares (inverse CDF, binary search). */
export function accountPicker(shares: Float64Array, rng: () => number): () => number {
  const cdf = new Float64Array(shares.length);
  let sum = 0;
  for (let i = 0; i < shares.length; i++) {
    sum += shares[i] as number;
    cdf[i] = sum;
  }
  return () => {
    const u = rng() * sum;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Poisson-distributed count with mean `mean` (normal approximation above 50). */
export function poisson(mean: number, rng: () => number): number {
  if (mean <= 0) return 0;
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * gaussian(rng)));
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rng();
  while (p > limit) {
    k++;
    p *= rng();
  }
  return k;
}

/** A standard normal draw (Box–Muller). */
export function gaussian(rng: () => number): number {
  return Math.sqrt(-2 * Math.log(rng() || 1e-12)) * Math.cos(2 * Math.PI * rng());
}

let requestCounter = 0;
const SESSION_MINUTES = 30;
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** `n` in Crockford base 32, `width` characters (ids' ULID part). */
function base32(n: number, width: number): string {
  let text = "";
  for (let rest = n; text.length < width; rest = Math.floor(rest / 32)) text = CROCKFORD[rest % 32] + text;
  return text;
}

/** The sub-user `u` of account `a` (rank a + 1) and one usage record of it at `ts`. */
export function ownedRecord(a: number, u: number, ts: number, rng: () => number): OwnedRecord {
  const gateName = `s${a.toString(36)}x${u.toString(36)}`;
  const region = REGIONS[(a * 7 + u) % REGIONS.length] as string;
  const sticky = rng() < SESSION_SHARE ? Math.floor(rng() * 2) : null;
  const failed = rng() < ERROR_SHARE;
  const bytesIn = 2_000 + Math.floor(rng() * 200_000);
  const record: UsageRecord = {
    request_id: `req_sim${(requestCounter++).toString(36)}`,
    ts: new Date(ts).toISOString(),
    product: "residential",
    username: `user_${gateName}-type-res-region-${region}${sticky === null ? "" : `-session-c${sticky}-sesstime-${SESSION_MINUTES}`}`,
    dest_ip: null,
    method: "GET",
    target_host: HOSTS[Math.floor(rng() * HOSTS.length)] as string,
    status: failed ? 502 : 200,
    bytes_in: failed ? 0 : bytesIn,
    bytes_out: 300 + Math.floor(rng() * 2_000),
    exit_ip: `198.51.100.${1 + Math.floor(rng() * 254)}`,
    exit_geo: `${region}//`,
    exit_asn: 64_496 + ((a + u) % 16),
    carrier_name: null,
    tag: null,
    error_code: failed ? "upstream-refused" : null,
    repinned: false,
    client_ip: `100.${64 + (a % 64)}.${u % 256}.${1 + Math.floor(rng() * 200)}`,
    // Decided at the node: the session is the username's generation (the account's store names it), and the
    // owner is the snapshot's (its tag is added by the caller, which signs it once per sub-user).
    ...(sticky === null ? {} : { session_gen: 0 }),
    subuser: subuserIdOf(a, u),
    account: accountIdOf(a),
  };
  return {
    record,
    owner: { subuserId: subuserIdOf(a, u), gateName },
    ts,
    target: {
      type: "res",
      region,
      state: null,
      city: null,
      asn: null,
      sessionId: sticky === null ? null : `c${sticky}`,
      sesstime: sticky === null ? null : SESSION_MINUTES,
    },
  };
}

export const accountIdOf = (a: number) => `usr_${base32(a, 26)}`;

/** A fleet sub-user's id: its account's index and its own, 13 characters each. */
const subuserIdOf = (a: number, u: number) => `sub_${base32(a, 13)}${base32(u, 13)}`;

/** The account of a fleet sub-user. */
export const accountOfSubuser = (subuserId: string) => `usr_${"0".repeat(13)}${subuserId.slice(4, 17)}`;

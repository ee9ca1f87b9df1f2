import { DAY, toIso } from "../../platform/clock";
import type { Refusal } from "../../platform/gateway-rules";
import type { TargetRules } from "../../platform/target-rules";
import type { BandwidthProduct, Product } from "../../vocabulary";
import type { SessionRequest, SessionSnapshot, SessionUsage, TrafficProduct } from "../traffic-store/contract";

/**
 * What a `SubuserGate` and its callers share: its configuration, its decisions, sticky sessions' pins, and how
 * sessions' usage adds up (the usage producer sums a batch with the same rules the gate applies). Pure: no Durable
 * Object code.
 */

export type GatewayProduct = Product;
export type { BandwidthProduct };

/** What the gate knows of a pool: it is used up when used ≥ purchased (or when nothing was ever bought). */
export interface PoolFigures {
  purchasedBytes: number;
  usedBytes: number;
}

/** Everything the gate needs to decide, pushed by the API whenever the sub-user, its whitelist or its plan changes. */
export interface GateConfig {
  subuserId: string;
  accountId: string;
  name: string;
  products: GatewayProduct[];
  status: "active" | "disabled" | "deleted";
  passwordHash: string;
  previousPasswordHash: string | null;
  previousPasswordUntil: number | null;
  /** Effective limits per product: the sub-user's own, capped by the plan (null = no per-sub-user cap). */
  limits: Partial<Record<GatewayProduct, { concurrent: number | null; rps: number | null }>>;
  whitelist: Array<{ product: GatewayProduct; ip: string }>;
  /** The account's bandwidth pools, per gateway product; a product without one has none bought. */
  pools: Partial<Record<BandwidthProduct, PoolFigures>>;
  /** The sub-user's monthly cap in bytes (null: none), and its usage in the latest month it was told of. */
  trafficLimitBytes: number | null;
  monthUsage: { month: string; usedBytes: number } | null;
  /** Caps per UTC day and over the sub-user's life, in bytes, and its usage as last told (absent: stored before). */
  dailyLimitBytes?: number | null;
  dayUsage?: { day: string; usedBytes: number } | null;
  lifetimeLimitBytes?: number | null;
  lifetimeUsedBytes?: number;
  /** From this instant (ms) its requests are refused (null or absent: never). */
  expiresAt?: number | null;
  /** Where its requests may go (null or absent: anywhere). */
  targetRules?: TargetRules | null;
  /** The signed owner (`platform/owner-tag`): usage records carry it back. Absent in configs stored before it. */
  ownerTag?: string;
}

export interface DecideInput {
  product: GatewayProduct;
  /** SHA-256 of the presented password, or null when none was presented. */
  passwordHash: string | null;
  sourceIp: string;
  /** The username's session segments, when it has them. */
  session?: SessionSpec;
}

export type Decision =
  | { outcome: "unconfigured" }
  | {
      outcome: "allow";
      subuserId: string;
      lease: string;
      cacheTtlS: number;
      session: SessionPin | null;
      targetRules: TargetRules | null;
    }
  | ({ outcome: "deny" } & Refusal);

/**
 * What a gateway node needs to decide the sub-user's requests itself (docs/gateway.md, "Deciding at the node"):
 * the gate's view with its version, which grows with every change a node must hear of.
 */
export interface NodeSnapshot {
  name: string;
  subuserId: string;
  accountId: string;
  /** The signed owner the node reports with the sub-user's usage (null: not signed yet). */
  ownerTag: string | null;
  /** The sticky-session keys whose generation a termination moved (`platform/sticky-sessions`: `keyHash` → it). */
  generations: Record<string, number>;
  version: number;
  status: GateConfig["status"];
  products: GatewayProduct[];
  /** SHA-256 of each password that works; the rotated-out one with the instant it stops. */
  passwords: Array<{ sha256: string; until: number | null }>;
  whitelist: GateConfig["whitelist"];
  limits: GateConfig["limits"];
  /** Per bandwidth product the sub-user has: the account's pool is used up (or none was bought). */
  exhausted: Partial<Record<BandwidthProduct, boolean>>;
  /** The monthly cap is reached in `month` (UTC). */
  cap: { month: string; reached: boolean };
  /** The daily cap is reached on `day` (UTC). */
  dayCap: { day: string; reached: boolean };
  lifetimeCapReached: boolean;
  expiresAt: number | null;
  targetRules: TargetRules | null;
  /**
   * The limited products whose limits nodes use as standing shares (docs/gateway.md, "Standing shares"): each node
   * slot its part, with no lease. The others' limits are leased.
   */
  standing: GatewayProduct[];
}

/** A snapshot as nodes receive it, fetched or pushed (docs/gateway.md: snake_case, RFC 3339 times). */
export function snapshotOnWire(snapshot: NodeSnapshot) {
  return {
    name: snapshot.name,
    subuser: snapshot.subuserId,
    account: snapshot.accountId,
    owner_tag: snapshot.ownerTag,
    generations: snapshot.generations,
    version: snapshot.version,
    status: snapshot.status,
    products: snapshot.products,
    passwords: snapshot.passwords.map(({ sha256, until }) => ({ sha256, until: until === null ? null : toIso(until) })),
    whitelist: snapshot.whitelist,
    limits: snapshot.limits,
    exhausted: snapshot.exhausted,
    cap: snapshot.cap,
    day_cap: snapshot.dayCap,
    lifetime_cap_reached: snapshot.lifetimeCapReached,
    expires_at: snapshot.expiresAt === null ? null : toIso(snapshot.expiresAt),
    target_rules: targetRulesOnWire(snapshot.targetRules),
    standing: snapshot.standing,
  };
}

/** Target rules as the contract carries them (snake_case). */
export function targetRulesOnWire(rules: TargetRules | null) {
  return rules === null ? null : { mode: rules.mode, domains: rules.domains, ip_ranges: rules.ipRanges };
}

/** A snapshot as nodes receive it (the answer of `POST /internal/gateway/subusers`, and the `subuser` push). */
export type NodeSnapshotOnWire = ReturnType<typeof snapshotOnWire>;

/** A node's renewal of its shares of one product's limits. */
export interface ShareRenewal {
  node: string;
  /** The node's slot on the change feed (null: it has none, or its socket is down). */
  slot: number | null;
  product: GatewayProduct;
  held: { concurrent: number; rps: number };
  /** Open connections. */
  open: number;
  /** Requests admitted in the node's last rolling second. */
  recent: number;
  want: { concurrent: number; rps: number };
}

/** A node's new shares (null: no such limit), valid until `expiresAt`; `version` is the gate's snapshot's. */
export interface ShareGrant {
  concurrent: number | null;
  rps: number | null;
  expiresAt: number;
  version: number;
}

/** What a username's session segments ask for. */
export interface SessionSpec {
  /** The full gateway username, lower-case: the session key. */
  key: string;
  product: TrafficProduct;
  sessionId: string;
  region: string;
  state: string | null;
  city: string | null;
  asn: number | null;
  minutes: number;
}

/** The exit a released connection used: it pins its sticky session (or moves the pin on a repin). */
export interface ExitPin {
  exitIp: string;
  repinned: boolean;
}

export interface SessionPin {
  id: string;
  exitIp: string | null;
  startedAt: number;
  expiresAt: number;
}

/**
 * A sticky session to terminate (`SubuserGate.terminateSession`): its id, and for a session decided at the node (the
 * account's store names it from its usage) its key and generation.
 */
export interface SessionEnding {
  id: string;
  key?: string;
  generation?: number;
}

/**
 * What terminating a session did at its gate: the gate's own record of it (`book`: sessions the per-connection path
 * started; null when the gate holds none by that id), and the key's generation after the bump (null: no key given,
 * or the gate's session had already expired, so nothing was bumped).
 */
export interface SessionEnd {
  book: SessionSnapshot | null;
  generation: number | null;
}

/** A terminated session's record is kept this long (spec §8.5). */
export const TERMINATED_KEPT_MS = DAY;
/** A session keeps its latest requests (spec §3.3). */
export const LAST_REQUESTS = 10;

/**
 * Adds `usage` to `total`, the same session's usage so far (in place): sums, the exit IP of the earliest record
 * (it pins a session that has none), the latest repin, and the newest 10 requests. The producer sums a batch's
 * records with it, the gate a consumer batch's messages, so both read usage the same way.
 */
export function addSessionUsage(total: SessionUsage, usage: SessionUsage): void {
  if (usage.firstTs < total.firstTs) {
    total.firstTs = usage.firstTs;
    total.firstExitIp = usage.firstExitIp;
  }
  if (usage.repinnedExitIp !== null && (total.repinnedExitIp === null || usage.lastTs >= total.lastTs)) {
    total.repinnedExitIp = usage.repinnedExitIp;
  }
  total.lastTs = Math.max(total.lastTs, usage.lastTs);
  total.bytes += usage.bytes;
  total.requests += usage.requests;
  for (const request of usage.lastRequests) keepLatest(total.lastRequests, request);
}

/** A copy that `addSessionUsage` may change without touching the original. */
export function copySessionUsage(usage: SessionUsage): SessionUsage {
  return { ...usage, lastRequests: [...usage.lastRequests] };
}

/** Inserts `request` into `latest` (newest first, at most 10), unless it is older than all 10 kept. */
function keepLatest(latest: SessionRequest[], request: SessionRequest): void {
  let at = latest.length;
  while (at > 0 && isNewer(request, latest[at - 1] as SessionRequest)) at--;
  if (at >= LAST_REQUESTS) return;
  latest.splice(at, 0, request);
  if (latest.length > LAST_REQUESTS) latest.pop();
}

/** Newest first by time, then by request id in binary order (as SQLite's `ORDER BY ts DESC, request_id DESC`). */
function isNewer(a: SessionRequest, b: SessionRequest): boolean {
  return a.ts > b.ts || (a.ts === b.ts && a.requestId > b.requestId);
}

import { utcDay, utcMonth } from "./clock.ts";
import type { SlidingLog } from "./sliding-log.ts";
import { type TargetRules, targetAllowed } from "./target-rules.ts";

/**
 * The gateway's decision rules, one source for the sub-user's gate (the per-connection `authorize`) and every
 * gateway node (which decides at the node): the refusals and their statuses, the order of the checks, the retry
 * arithmetic, the sandbox rule and the target as the contract carries it. Pure and erasable, importing only pure
 * platform files: Node runs it as it is, so both sides decide alike (docs/gateway.md).
 */

/** Every refusal the gateway makes, with its HTTP status; a SOCKS5 refusal's status byte is 1 + its index here. */
export const gatewayRefusals = {
  "auth-failed": 407,
  "not-whitelisted": 407,
  "subuser-disabled": 403,
  "product-not-allowed": 403,
  "bandwidth-exhausted": 402,
  "traffic-limit-reached": 402,
  "concurrent-limit": 429,
  "rps-limit": 429,
  "bad-username": 400,
  "unknown-region": 400,
  "state-without-region": 400,
  "city-without-state": 400,
  "session-incomplete": 400,
  "sesstime-out-of-range": 400,
  "auth-unavailable": 503,
  "auth-throttled": 429,
  "ip-released": 403,
  "ip-provisioning": 403,
  "ip-expired": 403,
  "subuser-expired": 403,
  "daily-limit-reached": 402,
  "lifetime-limit-reached": 402,
  "target-denied": 403,
} as const;
export type GatewayErrorCode = keyof typeof gatewayRefusals;
export type RefusalStatus = (typeof gatewayRefusals)[GatewayErrorCode];
export const gatewayErrorCodes = Object.keys(gatewayRefusals) as GatewayErrorCode[];

/**
 * SOCKS5 (RFC 1929) has one failure status byte and no headers: a refusal answers with 1 + its code's index in the
 * catalogue (any non-zero byte is a failure; an unknown code 0xff).
 */
export function socksStatusByte(errorCode: string): number {
  const index = gatewayErrorCodes.indexOf(errorCode as GatewayErrorCode);
  return index < 0 ? 0xff : index + 1;
}

/** The refusal a SOCKS5 status byte names (an unknown byte: `auth-failed`, the credentials' own failure). */
export function socksRefusal(statusByte: number): Refusal {
  return refusal(gatewayErrorCodes[statusByte - 1] ?? "auth-failed");
}

/** The service code of the gateway's 429s (spec §7). */
export const LIMIT_SERVICE_CODE = 30002;

/** A refusal: its status from the catalogue; a 429 carries the service code and when to retry. */
export interface Refusal {
  status: RefusalStatus;
  errorCode: GatewayErrorCode;
  retryAfterS?: number;
  serviceCode?: typeof LIMIT_SERVICE_CODE;
}

export function refusal(errorCode: GatewayErrorCode): Refusal {
  return { status: gatewayRefusals[errorCode], errorCode };
}

/** A limit's refusal (429): the service code, and the whole seconds (at least 1) until a place frees. */
export function limited(errorCode: "rps-limit" | "concurrent-limit" | "auth-throttled", retryAfterS: number): Refusal {
  return { ...refusal(errorCode), serviceCode: LIMIT_SERVICE_CODE, retryAfterS: Math.max(1, retryAfterS) };
}

/** Sandbox sub-users (gateway names starting with `t`) exist only for the API's test helpers: never routed. */
export function isSandboxName(name: string): boolean {
  return name.startsWith("t");
}

/** What the access rules read of a sub-user (its gate's configuration, or a node's snapshot of it). */
export interface AccessState {
  status: "active" | "disabled" | "deleted";
  products: readonly string[];
  /** SHA-256 (hex) of each working password; `until` (ms): a rotated-out one's end, null for the current. */
  passwords: ReadonlyArray<{ sha256: string; until: number | null }>;
  /** Whether each bandwidth product's pool is used up; a product missing has no pool bought. */
  exhausted: Readonly<Record<string, boolean>>;
  /** The monthly cap: reached in `month` (UTC `YYYY-MM`); null: no cap. */
  cap: { month: string; reached: boolean } | null;
  /** The daily cap: reached on `day` (UTC `YYYY-MM-DD`); null: no cap. */
  dayCap: { day: string; reached: boolean } | null;
  /** The lifetime cap is reached (it is raised, never reset). */
  lifetimeCapReached: boolean;
  /** From this instant (ms) every request is refused; null: never. */
  expiresAt: number | null;
}

export type { TargetRules };

/** A request as the access rules see it: the product, the password's hash (null: none) and the whitelist's word. */
export interface AccessRequest {
  product: string;
  passwordHash: string | null;
  whitelisted: () => boolean;
}

/**
 * Everything but the limits, in the contract's order: a deleted sub-user first (it answers like an unknown name,
 * whatever is presented), then credentials (or the whitelist), status, product, pool, cap. An unauthenticated caller
 * learns nothing of the sub-user's state. Null when allowed.
 */
export function accessRefusal(state: AccessState, request: AccessRequest, at: number): Refusal | null {
  if (state.status === "deleted") return refusal("auth-failed");
  if (request.passwordHash !== null) {
    if (!passwordAccepted(state.passwords, request.passwordHash, at)) return refusal("auth-failed");
  } else if (!request.whitelisted()) {
    return refusal("not-whitelisted");
  }
  if (state.status === "disabled") return refusal("subuser-disabled");
  if (state.expiresAt !== null && at >= state.expiresAt) return refusal("subuser-expired");
  if (!state.products.includes(request.product)) return refusal("product-not-allowed");
  if (request.product !== "isp" && state.exhausted[request.product] !== false) return refusal("bandwidth-exhausted");
  if (state.lifetimeCapReached) return refusal("lifetime-limit-reached");
  if (state.cap?.reached && state.cap.month === utcMonth(at)) return refusal("traffic-limit-reached");
  if (state.dayCap?.reached && state.dayCap.day === utcDay(at)) return refusal("daily-limit-reached");
  return null;
}

/**
 * A target the sub-user's rules keep its requests from (403 `target-denied`), checked for each plain HTTP request's
 * host, each `CONNECT` and each SOCKS5 request, once access is granted. Null when allowed.
 */
export function targetRefusal(rules: TargetRules | null, host: string): Refusal | null {
  return targetAllowed(rules, host) ? null : refusal("target-denied");
}

/** Whether `hash` is a password still working at `at`; every hash is compared, so timing says nothing of which. */
export function passwordAccepted(passwords: AccessState["passwords"], hash: string, at: number): boolean {
  let accepted = false;
  for (const { sha256, until } of passwords) {
    if (constantTimeEqual(sha256, hash) && (until === null || until > at)) accepted = true;
  }
  return accepted;
}

/** Limits of one product: open connections and requests in a rolling second (null: no limit). */
export interface Limits {
  concurrent: number | null;
  rps: number | null;
}

/**
 * The limits, after access: the rolling second's requests (`admitted`), then, for a new connection, the open ones.
 * Null when the request may take its place (the caller adds it to `admitted`).
 */
export function placeRefusal(
  limits: Limits,
  admitted: SlidingLog,
  open: number,
  newConnection: boolean,
  at: number,
): Refusal | null {
  if (limits.rps !== null && admitted.count(at) >= limits.rps) {
    const freesAt = admitted.nextExpiry(at) ?? at + 1000;
    return limited("rps-limit", Math.ceil((freesAt - at) / 1000));
  }
  if (newConnection && limits.concurrent !== null && open >= limits.concurrent) {
    return limited("concurrent-limit", 1);
  }
  return null;
}

/** Equal-length hex digests compared without an early exit. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

// Credentials at the node: a snapshot's whitelist, and a throttle on failures per source. Passwords are checked by
// the rules the gate runs too (src/platform/gateway-rules.ts).
import { createHash } from "node:crypto";
import { type WhitelistCheck, whitelistCheck } from "../src/platform/ip.ts";
import { SlidingLog } from "../src/platform/sliding-log.ts";
import type { TargetRules } from "../src/platform/target-rules.ts";
import type { Allowed, SubuserSnapshot } from "./wire.ts";

export const sha256Hex = (text: string): string => createHash("sha256").update(text).digest("hex");

/**
 * The earliest instant after `now` at which the snapshot refuses by itself, with no push: a rotated-out password
 * stops working, or the sub-user expires (null: none pending).
 */
export function nextLapse(snapshot: SubuserSnapshot, now: number): number | null {
  const ends = snapshot.passwords.map(({ until }) => (until === null ? Infinity : Date.parse(until)));
  if (snapshot.expires_at) ends.push(Date.parse(snapshot.expires_at));
  const next = Math.min(...ends.filter((end) => end > now));
  return Number.isFinite(next) ? next : null;
}

/** Target rules as the wire carries them (a snapshot's, or an allow's), read once per object as the rules take them. */
type WireRules = NonNullable<SubuserSnapshot["target_rules"]>;
const targetRules = new WeakMap<WireRules, TargetRules>();
export function rulesOf(wire: WireRules | null | undefined): TargetRules | null {
  if (!wire) return null;
  let rules = targetRules.get(wire);
  if (!rules) {
    rules = { mode: wire.mode, domains: wire.domains, ipRanges: wire.ip_ranges };
    targetRules.set(wire, rules);
  }
  return rules;
}

/** The target rules an allow carries (null: anywhere). */
export function allowedRules(decision: Allowed): TargetRules | null {
  return rulesOf(decision.target_rules);
}

/** Each snapshot's whitelist, compiled once by the matcher the sub-user's gate uses too. */
const whitelists = new WeakMap<SubuserSnapshot, WhitelistCheck>();

/** True when `sourceIp` is on the snapshot's whitelist for `product`. */
export function whitelisted(snapshot: SubuserSnapshot, product: string, sourceIp: string): boolean {
  let check = whitelists.get(snapshot);
  if (!check) {
    check = whitelistCheck(snapshot.whitelist);
    whitelists.set(snapshot, check);
  }
  return check(product, sourceIp);
}

/**
 * Failed credentials per source address: past `limit` failures in `windowMs` a source is refused before its
 * credentials are looked at, so guessing costs the guesser, not the API. At most `maxSources` are tracked.
 */
export class FailureThrottle {
  #sources = new Map<string, SlidingLog>();
  #limit: number;
  #windowMs: number;
  #maxSources: number;

  constructor({ limit = 20, windowMs = 10_000, maxSources = 10_000 } = {}) {
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#maxSources = maxSources;
  }

  /** Seconds until the source may try again, or 0 when it is not throttled. */
  retryAfterS(sourceIp: string, now: number): number {
    const failures = this.#sources.get(sourceIp);
    if (!failures || failures.count(now) < this.#limit) return 0;
    return Math.max(1, Math.ceil(((failures.nextExpiry(now) ?? now) - now) / 1000));
  }

  fail(sourceIp: string, now: number): void {
    let failures = this.#sources.get(sourceIp);
    if (!failures) {
      if (this.#sources.size >= this.#maxSources) this.#forgetQuiet(now);
      failures = new SlidingLog(this.#windowMs);
      this.#sources.set(sourceIp, failures);
    }
    failures.add(now);
  }

  /** Drops sources with no recent failure; if all are recent, the oldest tracked. */
  #forgetQuiet(now: number): void {
    for (const [source, failures] of this.#sources) if (failures.count(now) === 0) this.#sources.delete(source);
    const oldest = this.#sources.keys().next();
    if (this.#sources.size >= this.#maxSources && !oldest.done) this.#sources.delete(oldest.value);
  }
}

// Credentials at the node: a snapshot's whitelist, and a throttle on failures per source. Passwords are checked by
// the rules the gate runs too (src/platform/gateway-rules.ts).
import { createHash } from "node:crypto";
import { BlockList, isIPv4, isIPv6 } from "node:net";
import { SlidingLog } from "../src/platform/sliding-log.ts";

export const sha256Hex = (text) => createHash("sha256").update(text).digest("hex");

/** The earliest instant after `now` at which a rotated-out password stops working (null: none pending). */
export function nextPasswordExpiry(snapshot, now) {
  const ends = snapshot.passwords.map(({ until }) => (until === null ? Infinity : Date.parse(until)));
  const next = Math.min(...ends.filter((end) => end > now));
  return Number.isFinite(next) ? next : null;
}

const whitelists = new WeakMap();

/** True when `sourceIp` is on the snapshot's whitelist for `product`. */
export function whitelisted(snapshot, product, sourceIp) {
  let lists = whitelists.get(snapshot);
  if (!lists) {
    lists = compileWhitelist(snapshot.whitelist);
    whitelists.set(snapshot, lists);
  }
  const list = lists.get(product);
  if (!list) return false;
  if (isIPv4(sourceIp)) return list.check(sourceIp, "ipv4");
  return isIPv6(sourceIp) && list.check(sourceIp, "ipv6");
}

function compileWhitelist(entries) {
  const lists = new Map();
  for (const { product, ip } of entries) {
    const [address, prefix] = ip.split("/");
    const type = isIPv4(address) ? "ipv4" : isIPv6(address) ? "ipv6" : null;
    if (!type) continue;
    if (!lists.has(product)) lists.set(product, new BlockList());
    const list = lists.get(product);
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return lists;
}

/**
 * Failed credentials per source address: past `limit` failures in `windowMs` a source is refused before its
 * credentials are looked at, so guessing costs the guesser, not the API. At most `maxSources` are tracked.
 */
export class FailureThrottle {
  #sources = new Map();
  #limit;
  #windowMs;
  #maxSources;

  constructor({ limit = 20, windowMs = 10_000, maxSources = 10_000 } = {}) {
    this.#limit = limit;
    this.#windowMs = windowMs;
    this.#maxSources = maxSources;
  }

  /** Seconds until the source may try again, or 0 when it is not throttled. */
  retryAfterS(sourceIp, now) {
    const failures = this.#sources.get(sourceIp);
    if (!failures || failures.count(now) < this.#limit) return 0;
    return Math.max(1, Math.ceil((failures.nextExpiry(now) - now) / 1000));
  }

  fail(sourceIp, now) {
    let failures = this.#sources.get(sourceIp);
    if (!failures) {
      if (this.#sources.size >= this.#maxSources) this.#forgetQuiet(now);
      failures = new SlidingLog(this.#windowMs);
      this.#sources.set(sourceIp, failures);
    }
    failures.add(now);
  }

  /** Drops sources with no recent failure; if all are recent, the oldest tracked. */
  #forgetQuiet(now) {
    for (const [source, failures] of this.#sources) if (failures.count(now) === 0) this.#sources.delete(source);
    if (this.#sources.size >= this.#maxSources) this.#sources.delete(this.#sources.keys().next().value);
  }
}

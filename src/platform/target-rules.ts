import ipaddr from "ipaddr.js";
import { blockContains, formatBlock, type IpAddress, type IpBlock, parseBlock, parseIp } from "./ip.ts";

/**
 * A sub-user's target rules: where its requests may go. `allow`: only the listed destinations; `deny`: anywhere but
 * them. A domain covers itself and every subdomain; an IP range covers the targets written as an address in it. Pure
 * and erasable: the sub-user's gate, every gateway node and the credential test match with the same code.
 */
export const targetRuleModes = ["allow", "deny"] as const;
export interface TargetRules {
  mode: (typeof targetRuleModes)[number];
  /** Lower-case, without a trailing dot (`example.com`). */
  domains: string[];
  /** Canonical CIDR text (`203.0.113.0/24`, `2001:db8::/32`, or a single address). */
  ipRanges: string[];
}

/** The most domains and the most IP ranges one sub-user's rules hold (they travel in every node's snapshot). */
export const MAX_TARGET_DOMAINS = 200;
export const MAX_TARGET_IP_RANGES = 200;

/** A domain as the rules hold it: labels of a-z, 0-9 and `-` (IDNs in their `xn--` form), at least two of them. */
const DOMAIN =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?|xn--[a-z0-9-]{1,59})$/;

/** The rules' form of a domain as written (case and a trailing dot ignored), or null when it is not one. */
export function canonicalDomain(text: string): string | null {
  const domain = text.trim().toLowerCase().replace(/\.$/, "");
  return DOMAIN.test(domain) ? domain : null;
}

/** The canonical CIDR text of a range as written, or null (host bits set, or not an address or block). */
export function canonicalRange(text: string): string | null {
  const parsed = parseBlock(text);
  return parsed.ok ? formatBlock(parsed.block) : null;
}

/** Rules compiled for matching: the domains as a set (a host is looked up with each of its parents), the blocks. */
interface CompiledRules {
  mode: TargetRules["mode"];
  domains: ReadonlySet<string>;
  blocks: readonly IpBlock[];
}

const compiledRules = new WeakMap<TargetRules, CompiledRules>();
function compiled(rules: TargetRules): CompiledRules {
  let entry = compiledRules.get(rules);
  if (!entry) {
    const blocks = rules.ipRanges.flatMap((range) => {
      const parsed = parseBlock(range);
      return parsed.ok ? [parsed.block] : [];
    });
    entry = { mode: rules.mode, domains: new Set(rules.domains), blocks };
    compiledRules.set(rules, entry);
  }
  return entry;
}

/**
 * Whether a request may reach `host` (a name or an address, as the HTTP request, `CONNECT` or SOCKS5 names it; IPv6
 * in brackets or not). No rules: anywhere. An address written loosely (`0x7f.1`, `2130706433`), which resolvers
 * read as that address, is matched as the address, so a deny list cannot be stepped around by spelling.
 */
export function targetAllowed(rules: TargetRules | null, host: string): boolean {
  if (rules === null) return true;
  const { mode, domains, blocks } = compiled(rules);
  const target = targetOf(host);
  const listed =
    target.kind === "address"
      ? blocks.some((block) => blockContains(block, target.address))
      : target.kind === "domain" && coveredBy(domains, target.domain);
  return mode === "allow" ? listed : !listed;
}

type Target = { kind: "address"; address: IpAddress } | { kind: "domain"; domain: string } | { kind: "other" };

function targetOf(host: string): Target {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, "$1")
    .toLowerCase()
    .replace(/\.$/, "");
  const strict = parseIp(bare);
  if (strict) return { kind: "address", address: strict };
  if (!bare.includes(":") && ipaddr.IPv4.isValid(bare)) return { kind: "address", address: ipaddr.IPv4.parse(bare) };
  if (bare.includes(":") && ipaddr.IPv6.isValid(bare.replace(/%.*$/, ""))) {
    const address = ipaddr.IPv6.parse(bare.replace(/%.*$/, ""));
    return { kind: "address", address: address.isIPv4MappedAddress() ? address.toIPv4Address() : address };
  }
  return DOMAIN.test(bare) ? { kind: "domain", domain: bare } : { kind: "other" };
}

/** Whether the domain or one of its parents is listed. */
function coveredBy(domains: ReadonlySet<string>, domain: string): boolean {
  for (let suffix = domain; ; suffix = suffix.slice(suffix.indexOf(".") + 1)) {
    if (domains.has(suffix)) return true;
    if (!suffix.includes(".")) return false;
  }
}

import { getDomain, parse } from "tldts";
import { parseIp } from "../../platform/ip";

const NUMERIC_HOST = /^[0-9.]+$/;

/** The `domain` group of records whose target is an IP address (they would otherwise fill the bound one each). */
export const IP_DOMAIN = "(ip)";
/** The `domain` group of target hosts without a registrable domain (`localhost`, a bare public suffix). */
export const NO_DOMAIN = "(none)";

/**
 * The registrable domain (eTLD+1, ICANN section of the public suffix list, via `tldts`) of a record's
 * `target_host`, lower-case: `a.b.example.co.uk` → `example.co.uk`. A port, brackets around an IPv6 address and
 * a trailing dot are ignored; an IP address is `(ip)`, a host without a registrable domain `(none)`.
 */
export function targetDomain(host: string): string {
  const bare = host.startsWith("[")
    ? (host.slice(1).split("]")[0] ?? "")
    : host.indexOf(":") === host.lastIndexOf(":")
      ? host.replace(/:\d{1,5}$/, "")
      : host;
  // An IPv4-mapped IPv6 address, and the short numeric IPv4 forms (`1.2.3`), are addresses that tldts does not know.
  if (parse(bare).isIp || parseIp(bare) || NUMERIC_HOST.test(bare)) return IP_DOMAIN;
  return getDomain(bare)?.toLowerCase() ?? NO_DOMAIN;
}

import { parseIp } from "../../platform/ip";

/**
 * Where webhooks may be sent (SSRF protection). Production: `https` only, no credentials in the URL, no fragment,
 * and a host that is neither an IP literal outside public unicast space (loopback, private, link-local — which
 * includes the 169.254.169.254 metadata address —, carrier-grade NAT, multicast, reserved…) nor a local or
 * internal name (`localhost`, `*.localhost`, `*.local`, `*.internal`, `*.home.arpa`, single-label names).
 * The WHATWG URL parser has already turned `https://2130706433/` and `https://0x7f.1/` into `127.0.0.1`.
 *
 * `allowLocalHttp` (the `WEBHOOK_ALLOW_LOCAL_HTTP` setting, for local development only) also accepts
 * `http://127.0.0.1`, `http://localhost` and `http://[::1]` on any port.
 */
export interface UrlPolicy {
  allowLocalHttp: boolean;
}

export type UrlVerdict = { ok: true; url: string } | { ok: false; reason: string };

const LOCAL_DEV_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);
const INTERNAL_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa", ".lan"];

export function checkWebhookUrl(text: string, policy: UrlPolicy): UrlVerdict {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: "is not an absolute URL" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not carry credentials" };
  if (url.hash) return { ok: false, reason: "must not have a fragment" };
  const host = url.hostname.toLowerCase();
  if (url.protocol === "http:" && policy.allowLocalHttp && LOCAL_DEV_HOSTS.has(host))
    return { ok: true, url: url.href };
  if (url.protocol !== "https:") return { ok: false, reason: "must use https" };
  const hostProblem = hostRefusal(host);
  return hostProblem ? { ok: false, reason: hostProblem } : { ok: true, url: url.href };
}

function hostRefusal(host: string): string | null {
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  const ip = parseIp(literal);
  if (ip) return ip.range() === "unicast" ? null : `must not point at a ${ip.range()} address`;
  if (host === "localhost" || INTERNAL_SUFFIXES.some((suffix) => host.endsWith(suffix))) {
    return "must not point at a local or internal host";
  }
  if (!host.includes(".")) return "must use a fully qualified host name";
  return null;
}

/**
 * The proxy-string generator's rules: the gateway username grammar
 * `{prefix}_{name}-type-{res|mob}-region-{cc}[-state-{s}][-city-{c}][-asn-{n}][-session-{id}-sesstime-{minutes}]`,
 * checked here as the gateway checks it, so a string the console shows is one the gateway accepts as written.
 * The country list is the gateway's own (the same module), so no code it would refuse as `unknown-region` passes.
 */
import { isCountryCode } from "../../src/platform/countries";
import type { BandwidthProduct } from "../../src/vocabulary";

export interface ProxyTarget {
  product: BandwidthProduct;
  country: string;
  state: string;
  city: string;
  asn: string;
  session: string;
  /** Minutes, with `session`. */
  sesstime: string;
}

/** A rotating US exit of `product`: what the generator starts from. */
export function rotatingTarget(product: ProxyTarget["product"]): ProxyTarget {
  return { product, country: "us", state: "", city: "", asn: "", session: "", sesstime: "10" };
}

export interface GatewaySettings {
  host: string;
  port: number;
  username_prefix: string;
  max_sesstime_minutes: { residential: number; mobile: number };
}

/** The first problem of a target, in words, or null when the gateway accepts it. */
export function targetProblem(target: ProxyTarget, gateway: GatewaySettings): string | null {
  const { country, state, city, asn, session, sesstime } = normalized(target);
  if (!/^[a-z]{2}$/.test(country) || !isCountryCode(country)) {
    return "Country: a two-letter ISO 3166 code such as us, gb or de.";
  }
  if (state && !/^[a-z0-9]{1,3}$/.test(state)) return "State: the 1-3 character ISO 3166-2 suffix, such as ca or ny.";
  if (city && !state) return "A city needs its state.";
  if (city && !/^[a-z0-9]{1,40}$/.test(city)) return "City: letters and digits only, such as newyork or la.";
  if (asn && (!/^\d{1,10}$/.test(asn) || Number(asn) > 4_294_967_295)) return "ASN: a number such as 7922.";
  if (session && !/^[a-z0-9]{1,32}$/.test(session)) return "Session: 1-32 characters of a-z and 0-9.";
  if (session) {
    const max = gateway.max_sesstime_minutes[target.product];
    const minutes = Number(sesstime);
    if (!/^\d{1,4}$/.test(sesstime) || minutes < 1 || minutes > max) return `Session time: 1-${max} minutes.`;
  }
  return null;
}

function normalized(target: ProxyTarget) {
  const clean = (value: string) => value.trim().toLowerCase();
  return {
    country: clean(target.country),
    state: clean(target.state),
    city: clean(target.city).replace(/[\s_-]+/g, ""),
    asn: target.asn.trim(),
    session: clean(target.session),
    sesstime: target.sesstime.trim(),
  };
}

/** The gateway username of a sub-user's gateway `name` for a target (call `targetProblem` first). */
export function gatewayUsername(name: string, target: ProxyTarget, prefix: string): string {
  const { country, state, city, asn, session, sesstime } = normalized(target);
  const segments: [string, string][] = [
    ["type", target.product === "mobile" ? "mob" : "res"],
    ["region", country],
  ];
  if (state) segments.push(["state", state]);
  if (state && city) segments.push(["city", city]);
  if (asn) segments.push(["asn", String(Number(asn))]);
  if (session) segments.push(["session", session], ["sesstime", String(Number(sesstime))]);
  return `${prefix}_${name}-${segments.map(([key, value]) => `${key}-${value}`).join("-")}`;
}

/** `host:port:user:pass`, the line most proxy tools import. */
export function proxyLine(gateway: GatewaySettings, username: string, password: string): string {
  return `${gateway.host}:${gateway.port}:${username}:${password}`;
}

/** A curl command that sends one request through the gateway. */
export function curlLine(gateway: GatewaySettings, username: string, password: string): string {
  return `curl -x http://${gateway.host}:${gateway.port} -U '${username}:${password}' https://example.com/`;
}

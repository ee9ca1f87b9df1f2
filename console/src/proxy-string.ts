/**
 * The proxy-string generator's rules: a target typed into the console, checked as the gateway checks it (the
 * grammar's own segment patterns and country list), so a string the console shows is one the gateway accepts as
 * written. The username itself and the line are built by the modules the API's proxy lists use.
 */
import {
  PASSWORD_PLACEHOLDER,
  type ProxyListFormat,
  type ProxyProtocol,
  txtLine,
} from "../../src/domain/gateway/proxy-lines";
import { buildUsername, MAX_ASN, SEGMENT_VALUE, typeOf } from "../../src/domain/gateway/username";
import { isCountryCode } from "../../src/platform/countries";
import { csvField } from "../../src/platform/csv";
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
  if (!SEGMENT_VALUE.region.test(country) || !isCountryCode(country)) {
    return "Country: a two-letter ISO 3166 code such as us, gb or de.";
  }
  if (state && !SEGMENT_VALUE.state.test(state)) return "State: the 1-3 character ISO 3166-2 suffix, such as ca or ny.";
  if (city && !state) return "A city needs its state.";
  if (city && !SEGMENT_VALUE.city.test(city)) return "City: letters and digits only, such as newyork or la.";
  if (asn && (!SEGMENT_VALUE.asn.test(asn) || Number(asn) > MAX_ASN)) return "ASN: a number such as 7922.";
  if (session && !SEGMENT_VALUE.session.test(session)) return "Session: 1-32 characters of a-z and 0-9.";
  if (session) {
    const max = gateway.max_sesstime_minutes[target.product];
    const minutes = Number(sesstime);
    if (!SEGMENT_VALUE.sesstime.test(sesstime) || minutes < 1 || minutes > max)
      return `Session time: 1-${max} minutes.`;
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
  return buildUsername(prefix, name, {
    type: typeOf(target.product),
    region: country,
    state: state || null,
    city: state && city ? city : null,
    asn: asn ? Number(asn) : null,
    sessionId: session || null,
    sesstime: session ? Number(sesstime) : null,
  });
}

/** `host:port:user:pass`, the line most proxy tools import. */
export function proxyLine(gateway: GatewaySettings, username: string, password: string): string {
  return txtLine({ host: gateway.host, port: gateway.port, username, password });
}

/** A curl command that sends one request through the gateway. */
export function curlLine(gateway: GatewaySettings, username: string, password: string): string {
  return `curl -x http://${gateway.host}:${gateway.port} -U '${username}:${password}' https://example.com/`;
}

export interface ListChoice {
  sticky: boolean;
  /** Sessions, when sticky. */
  count: number;
  format: ProxyListFormat;
  protocol: ProxyProtocol;
}

/** The API's proxy-list query for a target's product and geo (the list makes its own sessions, of its sesstime). */
export function proxyListQuery(target: ProxyTarget, choice: ListChoice) {
  const { country, state, city, asn, sesstime } = normalized(target);
  return {
    product: target.product,
    country,
    ...(state ? { state } : {}),
    ...(state && city ? { city } : {}),
    ...(asn ? { asn: Number(asn) } : {}),
    session: choice.sticky ? ("sticky" as const) : ("rotating" as const),
    ...(choice.sticky ? { count: choice.count, sesstime: Number(sesstime) } : {}),
    format: choice.format,
    ...(choice.format === "url" ? { protocol: choice.protocol } : {}),
  };
}

/** A downloaded list with the password in place of the API's placeholder, written as each format writes a value. */
export function withPassword(list: string, format: ProxyListFormat, password: string): string {
  const written = format === "url" ? encodeURIComponent(password) : format === "csv" ? csvField(password) : password;
  return list.replaceAll(PASSWORD_PLACEHOLDER, () => written);
}

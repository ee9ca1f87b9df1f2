import { isCountryCode } from "../../platform/countries.ts";
import type { BandwidthProduct } from "../../vocabulary";

/**
 * The gateway username grammar (reference facts):
 * `{prefix}_{name}-type-{res|mob}-region-{cc}[-state-{s}][-city-{c}][-asn-{n}][-session-{id}-sesstime-{min}]`.
 * Built and parsed here only: the API's proxy lists, the console's generator, the sandbox and the gateway nodes all
 * use these two functions, so a username one of them writes is one the others read.
 */
export type UsernameError =
  | "bad-username"
  | "unknown-region"
  | "state-without-region"
  | "city-without-state"
  | "session-incomplete"
  | "sesstime-out-of-range";

export interface GatewayTarget {
  type: "res" | "mob";
  region: string;
  state: string | null;
  city: string | null;
  asn: number | null;
  sessionId: string | null;
  /** Minutes. */
  sesstime: number | null;
}

export interface ParsedUsername {
  name: string;
  product: BandwidthProduct;
  target: GatewayTarget;
}

export type UsernameResult = { ok: true; value: ParsedUsername } | { ok: false; error: UsernameError };

const SEGMENT_ORDER = ["type", "region", "state", "city", "asn", "session", "sesstime"] as const;
type Segment = (typeof SEGMENT_ORDER)[number];

/** What each segment's value may be. */
export const SEGMENT_VALUE: Record<Segment, RegExp> = {
  type: /^(res|mob)$/,
  region: /^[a-z]{2}$/,
  state: /^[a-z0-9]{1,3}$/,
  city: /^[a-z0-9]{1,40}$/,
  asn: /^\d{1,10}$/,
  session: /^[a-z0-9]{1,32}$/,
  sesstime: /^\d{1,4}$/,
};

/** Longest sticky session, in minutes: residential 30 (reference facts), mobile 60 (spec §8.4 session lifetime). */
export const MAX_SESSTIME_MINUTES = { residential: 30, mobile: 60 } as const;
export const MAX_ASN = 4_294_967_295;

const fail = (error: UsernameError): UsernameResult => ({ ok: false, error });

export function parseUsername(username: string, prefix: string): UsernameResult {
  if (!username.startsWith(`${prefix}_`)) return fail("bad-username");
  const [name, ...tokens] = username.slice(prefix.length + 1).split("-");
  if (!name || !/^[a-z0-9]{1,32}$/.test(name) || tokens.length % 2 !== 0) return fail("bad-username");

  const segments: Partial<Record<Segment, string>> = {};
  let lastIndex = -1;
  for (let i = 0; i < tokens.length; i += 2) {
    const key = tokens[i] as Segment;
    const value = tokens[i + 1] as string;
    const index = SEGMENT_ORDER.indexOf(key);
    if (index <= lastIndex || !SEGMENT_VALUE[key].test(value)) return fail("bad-username");
    lastIndex = index;
    segments[key] = value;
  }

  if (!segments.type) return fail("bad-username");
  if (!segments.region) return fail(segments.state ? "state-without-region" : "bad-username");
  if (!isCountryCode(segments.region)) return fail("unknown-region");
  if (segments.city && !segments.state) return fail("city-without-state");
  if ((segments.session === undefined) !== (segments.sesstime === undefined)) return fail("session-incomplete");

  const product = segments.type === "res" ? "residential" : "mobile";
  const asn = segments.asn === undefined ? null : Number(segments.asn);
  if (asn !== null && asn > MAX_ASN) return fail("bad-username");
  const sesstime = segments.sesstime === undefined ? null : Number(segments.sesstime);
  if (sesstime !== null && (sesstime < 1 || sesstime > MAX_SESSTIME_MINUTES[product])) {
    return fail("sesstime-out-of-range");
  }

  return {
    ok: true,
    value: {
      name,
      product,
      target: {
        type: segments.type as "res" | "mob",
        region: segments.region,
        state: segments.state ?? null,
        city: segments.city ?? null,
        asn,
        sessionId: segments.session ?? null,
        sesstime,
      },
    },
  };
}

/** The username of the sub-user `name` for `target`: the parser's inverse for every target it accepts. */
export function buildUsername(prefix: string, name: string, target: GatewayTarget): string {
  const values: Record<Segment, string | number | null> = {
    type: target.type,
    region: target.region,
    state: target.state,
    city: target.city,
    asn: target.asn,
    session: target.sessionId,
    sesstime: target.sesstime,
  };
  const segments = SEGMENT_ORDER.flatMap((key) => (values[key] === null ? [] : [`${key}-${values[key]}`]));
  return `${prefix}_${name}-${segments.join("-")}`;
}

/** The `type` segment of a gateway product. */
export function typeOf(product: BandwidthProduct): GatewayTarget["type"] {
  return product === "mobile" ? "mob" : "res";
}

/** The user on a sub-user's ISP IPs: `{prefix}_{name}`, no segments (ISP IPs are addressed directly). */
export function ispUsername(prefix: string, name: string): string {
  return `${prefix}_${name}`;
}

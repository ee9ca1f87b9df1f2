// The gateway username grammar, decided at the node: a port of the API's parser (src/domain/gateway/username.ts,
// with the country list of src/platform/countries.ts), giving the same target and the same 400 codes.
// `{prefix}_{name}-type-{res|mob}-region-{cc}[-state-{s}][-city-{c}][-asn-{n}][-session-{id}-sesstime-{min}]`

/** ISO 3166-1 alpha-2 country codes (officially assigned), lower-case. */
const COUNTRIES = new Set(
  (
    "ad ae af ag ai al am ao aq ar as at au aw ax az ba bb bd be bf bg bh bi bj bl bm bn bo bq br bs bt bv bw by bz " +
    "ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cw cx cy cz de dj dk dm do dz ec ee eg eh er es et fi fj fk fm fo fr " +
    "ga gb gd ge gf gg gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il im in io iq ir is it je jm jo " +
    "jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md me mf mg mh mk ml mm mn mo mp mq mr " +
    "ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro " +
    "rs ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr ss st sv sx sy sz tc td tf tg th tj tk tl tm tn to tr tt tv " +
    "tw tz ua ug um us uy uz va vc ve vg vi vn vu wf ws ye yt za zm zw"
  ).split(" "),
);

const SEGMENT_ORDER = ["type", "region", "state", "city", "asn", "session", "sesstime"];
const SEGMENT_VALUE = {
  type: /^(res|mob)$/,
  region: /^[a-z]{2}$/,
  state: /^[a-z0-9]{1,3}$/,
  city: /^[a-z0-9]{1,40}$/,
  asn: /^\d{1,10}$/,
  session: /^[a-z0-9]{1,32}$/,
  sesstime: /^\d{1,4}$/,
};

/** Longest sticky session, in minutes. */
export const MAX_SESSTIME_MINUTES = { residential: 30, mobile: 60 };
const MAX_ASN = 4_294_967_295;

const fail = (error) => ({ ok: false, error });

/**
 * `{ok: true, value: {name, product, target: {type, region, state, city, asn, session_id, sesstime}}}` (the target
 * as the API's decision named it) or `{ok: false, error}` with the refusal's code.
 */
export function parseUsername(username, prefix = "user") {
  if (!username.startsWith(`${prefix}_`)) return fail("bad-username");
  const [name, ...tokens] = username.slice(prefix.length + 1).split("-");
  if (!name || !/^[a-z0-9]{1,32}$/.test(name) || tokens.length % 2 !== 0) return fail("bad-username");

  const segments = {};
  let lastIndex = -1;
  for (let i = 0; i < tokens.length; i += 2) {
    const [key, value] = [tokens[i], tokens[i + 1]];
    const index = SEGMENT_ORDER.indexOf(key);
    if (index <= lastIndex || !SEGMENT_VALUE[key].test(value)) return fail("bad-username");
    lastIndex = index;
    segments[key] = value;
  }

  if (!segments.type) return fail("bad-username");
  if (!segments.region) return fail(segments.state ? "state-without-region" : "bad-username");
  if (!COUNTRIES.has(segments.region)) return fail("unknown-region");
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
        type: segments.type,
        region: segments.region,
        state: segments.state ?? null,
        city: segments.city ?? null,
        asn,
        session_id: segments.session ?? null,
        sesstime,
      },
    },
  };
}

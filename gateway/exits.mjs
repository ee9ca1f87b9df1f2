// Simulated exits. There is no internet here, so the exit a request "leaves from" is computed, deterministically:
// residential exits in TEST-NET-2 (198.51.100.0/24), mobile in TEST-NET-3 (203.0.113.0/24), ISP the addressed
// batch IP itself; geo from the target parsed from the username; ASN from the username or, unset, one of
// the documentation ASNs (RFC 5398, 64496–64511) chosen by the region.
import { createHash } from "node:crypto";

const EXIT_NETWORKS = { residential: "198.51.100", mobile: "203.0.113" };
const CARRIERS = ["T-Mobile", "Verizon", "AT&T", "Vodafone", "Orange", "Telefonica"];

/** A number from a text, stable across runs. */
export function stableHash(text) {
  return createHash("sha256").update(text).digest().readUInt32BE(0);
}

function hostIn(network, seed) {
  return `${network}.${1 + (stableHash(seed) % 254)}`;
}

/** The exit a node proposes for a new sticky session (the API pins it unless another node pinned one first). */
export function proposedSessionExit(product, sessionKey) {
  return hostIn(EXIT_NETWORKS[product], sessionKey);
}

/**
 * The exit of one admitted connection. `decision` is the allow; `connectionSeed` differs per connection
 * (a rotating username gets a new exit for each one); `repin` asks for a new exit of a sticky session.
 */
export function chooseExit(decision, { connectionSeed, repin = false }) {
  const { product, target, session } = decision;
  if (product === "isp") {
    return exitOf(decision, {
      ip: target.ip,
      geo: [target.country.toLowerCase(), "", target.city ?? ""],
      repinned: false,
    });
  }
  const network = EXIT_NETWORKS[product];
  let ip;
  let repinned = false;
  if (session && repin) {
    ip = hostIn(network, `${session.id}:${connectionSeed}`);
    repinned = ip !== session.exit_ip;
  } else if (session) {
    ip = session.exit_ip ?? hostIn(network, session.id);
  } else {
    ip = hostIn(network, connectionSeed);
  }
  return exitOf(decision, { ip, geo: [target.region, target.state ?? "", target.city ?? ""], repinned });
}

function exitOf(decision, { ip, geo, repinned }) {
  const { product, target } = decision;
  const asn = target.asn ?? 64496 + (stableHash(geo[0]) % 16);
  const mobile = product === "mobile";
  return {
    ip,
    geo: geo.join("/"),
    asn,
    carrier: mobile ? CARRIERS[stableHash(ip) % CARRIERS.length] : null,
    connectionType: mobile ? "4g" : null,
    repinned,
  };
}

/** The response headers a real gateway adds (names recorded in docs/gateway.md). */
export function exitHeaders(exit, requestId, bytes) {
  const headers = {
    "X-Gateway-Request-Id": requestId,
    "X-Gateway-Exit-Ip": exit.ip,
    "X-Gateway-Exit-Geo": exit.geo,
    "X-Gateway-Exit-Asn": String(exit.asn),
  };
  if (bytes) {
    headers["X-Gateway-Bytes-In"] = String(bytes.in);
    headers["X-Gateway-Bytes-Out"] = String(bytes.out);
  }
  if (exit.carrier) {
    headers["X-Gateway-Carrier"] = exit.carrier;
    headers["X-Gateway-Connection-Type"] = exit.connectionType;
    headers["X-Gateway-Repinned"] = String(exit.repinned);
  }
  return headers;
}

/** What the echo endpoint answers: the exit a request left from, as JSON. */
export function echoBody(exit, requestId) {
  const [country, state, city] = exit.geo.split("/");
  return {
    request_id: requestId,
    exit_ip: exit.ip,
    exit_geo: { country, state: state || null, city: city || null },
    exit_asn: exit.asn,
    carrier_name: exit.carrier,
    repinned: exit.repinned,
  };
}

// Simulated exits. There is no internet here, so the exit a request "leaves from" is computed, deterministically:
// residential exits in TEST-NET-2 (198.51.100.0/24), mobile in TEST-NET-3 (203.0.113.0/24), ISP the addressed
// batch IP itself; geo from the target parsed from the username; ASN from the username or, unset, one of
// the documentation ASNs (RFC 5398, 64496–64511) chosen by the region. A sticky session's exit is decided at the
// node from the product's pool (session-cache.ts).
import { createHash } from "node:crypto";
import type { Allowed } from "./wire.ts";

const EXIT_NETWORKS = { residential: "198.51.100", mobile: "203.0.113" };
const CARRIERS = ["T-Mobile", "Verizon", "AT&T", "Vodafone", "Orange", "Telefonica"];

/** The exit an admitted connection leaves from, as its response headers and usage record name it. */
export interface Exit {
  ip: string;
  /** `cc/state/city`. */
  geo: string;
  asn: number;
  carrier: string | null;
  connectionType: string | null;
  /** A sticky session's exit was reassigned. */
  repinned: boolean;
}

/** What an exit is chosen from: an allow's product, target and sticky session. */
export type ExitDecision = Pick<Allowed, "product" | "target" | "session">;

/** A number from a text, stable across runs. */
export function stableHash(text: string): number {
  return createHash("sha256").update(text).digest().readUInt32BE(0);
}

function hostIn(network: string, seed: string): string {
  return `${network}.${1 + (stableHash(seed) % 254)}`;
}

/**
 * The exits a node can give a product's sticky sessions: its network's `.1–.254`, the same at every node. An exit
 * that leaves the pool (`drop`: the upstream network lost it; here only the `X-Simulate-Repin` hook) leaves it at
 * this node only; `version` grows with every change, so exits computed over the pool before are computed again.
 */
export class ExitPool {
  #candidates: readonly string[];
  #version = 0;

  constructor(network: string) {
    this.#candidates = Array.from({ length: 254 }, (_, i) => `${network}.${i + 1}`);
  }

  get candidates(): readonly string[] {
    return this.#candidates;
  }

  get version(): number {
    return this.#version;
  }

  /** Takes `ip` out of the pool; false when it is not in it, or is the last exit left (the pool never empties). */
  drop(ip: string): boolean {
    if (this.#candidates.length <= 1 || !this.#candidates.includes(ip)) return false;
    this.#candidates = this.#candidates.filter((candidate) => candidate !== ip);
    this.#version += 1;
    return true;
  }
}

/** A product's sticky exits. */
export type ExitPools = Record<keyof typeof EXIT_NETWORKS, ExitPool>;

/** A node's pools: every exit of each product's network, as every node starts. */
export function simulatedPools(): ExitPools {
  return { residential: new ExitPool(EXIT_NETWORKS.residential), mobile: new ExitPool(EXIT_NETWORKS.mobile) };
}

/**
 * The exit of one admitted connection. `decision` is the allow; `connectionSeed` differs per connection (a rotating
 * username gets a new exit for each one). A sticky session the node decided carries its exit (and whether it moved);
 * `repin` asks for a new exit of an `authorize` decision's sticky session.
 */
export function chooseExit(
  decision: ExitDecision,
  { connectionSeed, repin = false }: { connectionSeed: string; repin?: boolean },
): Exit {
  const { product, target, session } = decision;
  if (target.type === "isp") {
    return exitOf(product, target.asn, {
      ip: target.ip,
      geo: [target.country.toLowerCase(), "", target.city ?? ""],
      repinned: false,
    });
  }
  const network = EXIT_NETWORKS[product === "mobile" ? "mobile" : "residential"];
  let ip: string;
  let repinned = false;
  if (session && "generation" in session) {
    ip = session.exit_ip;
    repinned = session.repinned;
  } else if (session && repin) {
    ip = hostIn(network, `${session.id}:${connectionSeed}`);
    repinned = ip !== session.exit_ip;
  } else if (session) {
    ip = session.exit_ip ?? hostIn(network, session.id);
  } else {
    ip = hostIn(network, connectionSeed);
  }
  return exitOf(product, target.asn, { ip, geo: [target.region, target.state ?? "", target.city ?? ""], repinned });
}

function exitOf(
  product: ExitDecision["product"],
  targetAsn: number | null,
  { ip, geo, repinned }: { ip: string; geo: string[]; repinned: boolean },
): Exit {
  const asn = targetAsn ?? 64496 + (stableHash(geo[0] ?? "") % 16);
  const mobile = product === "mobile";
  return {
    ip,
    geo: geo.join("/"),
    asn,
    carrier: mobile ? (CARRIERS[stableHash(ip) % CARRIERS.length] ?? null) : null,
    connectionType: mobile ? "4g" : null,
    repinned,
  };
}

/** The response headers a real gateway adds (names recorded in docs/gateway.md). */
export function exitHeaders(
  exit: Exit,
  requestId: string,
  bytes?: { in: number; out: number },
): Record<string, string> {
  const headers: Record<string, string> = {
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
    headers["X-Gateway-Connection-Type"] = String(exit.connectionType);
    headers["X-Gateway-Repinned"] = String(exit.repinned);
  }
  return headers;
}

/** What the echo endpoint answers: the exit a request left from, as JSON. */
export function echoBody(exit: Exit, requestId: string) {
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

// The gateway side of the internal contract (docs/gateway.md): snapshots, leases, sessions and the change feed
// for the node's own decisions; authorize and release (ISP only); usage.

import { gatewayRefusals } from "../src/platform/gateway-rules.ts";

const CALL_TIMEOUT_MS = 10_000;

/** Calls the API's internal gateway routes with the gateway token; `calls` counts the calls made, per path. */
export function apiClient({ origin, token, nodeId }) {
  const calls = {};
  const call = async (path, body, headers = {}) => {
    calls[path] = (calls[path] ?? 0) + 1;
    const response = await fetch(`${origin}/internal/gateway${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
      body,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const payload = await response.json().catch(() => null);
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${payload?.code ?? ""}`);
    return payload;
  };
  const post = (path, body) => call(path, JSON.stringify({ node: nodeId, ...body }));
  return {
    calls,
    /** `{subusers: [snapshot], unknown: [name]}` for 1–100 gateway names. */
    subusers: (names) => post("/subusers", { names }),
    /**
     * `{leases: [{name, product, concurrent, rps, expires_at, version}]}` for 1–100 `{name, product, held, open, want}`;
     * `slot`: the node's slot on the change feed (null: none).
     */
    leases: (leases, slot = null) => post("/leases", { slot, leases }),
    /** `{session: {id, exit_ip, started_at, expires_at}}`: the sticky session of `username`, pinned to `exit_ip` if new. */
    session: ({ name, username, exitIp }) => post("/sessions", { name, username, exit_ip: exitIp }),
    /** The change feed's WebSocket address and the headers to open it with. */
    changes: () => ({
      url: `${origin.replace(/^http/, "ws")}/internal/gateway/changes?node=${encodeURIComponent(nodeId)}`,
      headers: { Authorization: `Bearer ${token}` },
    }),
    /** @returns the decision: `{allow: true, lease, cache_ttl_s, target, session, …}` or `{allow: false, status, error_code, …}` */
    authorize: (request) => call("/authorize", JSON.stringify(request)),
    /** `exit` (a sticky session's connection): the exit it used, which pins the session (or moves it on a repin). */
    release: (lease, exit) =>
      call("/release", JSON.stringify(exit ? { lease, exit_ip: exit.ip, repinned: exit.repinned } : { lease })),
    /** `gzipped`: the batch, gzip-compressed JSON. */
    reportUsage: (gzipped) => call("/usage", gzipped, { "Content-Encoding": "gzip" }),
  };
}

/** A refusal the gateway makes itself when the API cannot be asked. */
export const AUTH_UNAVAILABLE = {
  allow: false,
  status: gatewayRefusals["auth-unavailable"],
  error_code: "auth-unavailable",
};

/**
 * The authorization of one ISP client connection (ISP stays on the per-connection calls). New connections always ask; a connection may serve further requests
 * with the same credentials for `cache_ttl_s` without asking again. Each allow holds a lease (one open connection),
 * released when the decision is replaced and when the connection closes; a sticky session's release names the exit
 * the connection used, which pins the session for later decisions.
 */
export class ConnectionAuth {
  #api;
  #sourceIp;
  #cached = null;
  #exit = null;

  constructor(api, sourceIp) {
    this.#api = api;
    this.#sourceIp = sourceIp;
  }

  async decide({ username, password, product, destIp }) {
    const key = `${product}\n${destIp ?? ""}\n${username}\n${password ?? ""}`;
    const cached = this.#cached;
    if (cached && cached.key === key && performance.now() < cached.until) return cached.decision;

    let decision;
    try {
      decision = await this.#api.authorize({
        username,
        password: password || null,
        source_ip: this.#sourceIp,
        product,
        ...(destIp ? { dest_ip: destIp } : {}),
      });
    } catch (error) {
      console.error(`[gateway] authorize failed: ${error.message}`);
      return AUTH_UNAVAILABLE;
    }
    if (!decision.allow) return decision;
    this.close();
    this.#cached = { key, decision, until: performance.now() + decision.cache_ttl_s * 1000 };
    return decision;
  }

  /** The exit the current decision's requests leave from (a sticky session's is named when its lease is released). */
  useExit(exit) {
    this.#exit = exit;
  }

  /**
   * A tunnel carries no requests the gateway can see, so while it is open its decision is renewed every
   * `cache_ttl_s`; a refusal closes it (`onRefused`).
   */
  watch(credentials, onRefused) {
    const ttl = this.#cached?.decision.cache_ttl_s ?? 0;
    const timer = setInterval(
      async () => {
        if (!(await this.decide(credentials)).allow) onRefused();
      },
      ttl > 0 ? ttl * 1000 + 50 : 1000,
    );
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Frees the lease of the current decision (harmless when there is none). */
  close() {
    const decision = this.#cached?.decision;
    const exit = decision?.session ? this.#exit : null;
    this.#cached = null;
    this.#exit = null;
    if (!decision?.lease) return;
    this.#api
      .release(decision.lease, exit)
      .catch((error) => console.error(`[gateway] release failed: ${error.message}`));
  }
}

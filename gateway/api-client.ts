// The gateway side of the internal contract (docs/gateway.md): snapshots, leases and the change feed for the node's
// own decisions; authorize and release (ISP only); usage. Requests and answers are typed from the
// API's route schemas (wire.ts).

import { gatewayRefusals } from "../src/platform/gateway-rules.ts";
import type {
  AuthorizeAllowed,
  AuthorizeDecision,
  AuthorizeRequest,
  LeaseRenewal,
  LeasesAnswer,
  Refused,
  ReleaseAnswer,
  ReleaseRequest,
  SubusersAnswer,
  UsageAnswer,
} from "./wire.ts";

const CALL_TIMEOUT_MS = 10_000;

/** The exit a connection used, as its lease's release names it (a sticky session's pin). */
export interface UsedExit {
  ip: string;
  repinned: boolean;
}

/** Calls the API's internal gateway routes with the node's credential; `calls` counts the calls made, per path. */
export function apiClient({ origin, token, nodeId }: { origin: string; token: string; nodeId: string }) {
  const calls: Record<string, number> = {};
  const call = async <T>(path: string, body: string | Uint8Array, headers: Record<string, string> = {}): Promise<T> => {
    calls[path] = (calls[path] ?? 0) + 1;
    const response = await fetch(`${origin}/internal/gateway${path}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", ...headers },
      body,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const payload: unknown = await response.json().catch(() => null);
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${errorCode(payload)}`);
    return payload as T;
  };
  const post = <T>(path: string, body: object) => call<T>(path, JSON.stringify({ node: nodeId, ...body }));
  return {
    calls,
    /** Snapshots of 1–100 gateway names, and the names with no sub-user. */
    subusers: (names: string[]) => post<SubusersAnswer>("/subusers", { names }),
    /** New shares for 1–100 renewals; `slot`: the node's slot on the change feed (null: none). */
    leases: (leases: LeaseRenewal[], slot: number | null = null) => post<LeasesAnswer>("/leases", { slot, leases }),
    /** The change feed's WebSocket address and the headers to open it with. */
    changes: () => ({
      url: `${origin.replace(/^http/, "ws")}/internal/gateway/changes?node=${encodeURIComponent(nodeId)}`,
      headers: { Authorization: `Bearer ${token}` },
    }),
    /** The decision of one ISP connection. */
    authorize: (request: AuthorizeRequest) => call<AuthorizeDecision>("/authorize", JSON.stringify(request)),
    /** `exit` (a sticky session's connection): the exit it used, which pins the session (or moves it on a repin). */
    release: (lease: string, exit: UsedExit | null) =>
      call<ReleaseAnswer>(
        "/release",
        JSON.stringify(
          (exit ? { lease, exit_ip: exit.ip, repinned: exit.repinned } : { lease }) satisfies ReleaseRequest,
        ),
      ),
    /** `gzipped`: the batch (`UsageBatch`), gzip-compressed JSON. */
    reportUsage: (gzipped: Uint8Array) => call<UsageAnswer>("/usage", gzipped, { "Content-Encoding": "gzip" }),
  };
}

/** What the API's calls are, as the node's parts use them (a stub in tests). */
export type ApiClient = ReturnType<typeof apiClient>;

/** An error answer's `code`, or nothing. */
function errorCode(payload: unknown): string {
  const code = typeof payload === "object" && payload !== null && "code" in payload ? payload.code : undefined;
  return code === undefined || code === null ? "" : String(code);
}

/** A refusal the gateway makes itself when the API cannot be asked. */
export const AUTH_UNAVAILABLE: Refused = {
  allow: false,
  status: gatewayRefusals["auth-unavailable"],
  error_code: "auth-unavailable",
};

/** What one ISP connection presents. */
export interface IspCredentials {
  username: string;
  password?: string | undefined;
  product: AuthorizeRequest["product"];
  destIp?: string | undefined;
}

/**
 * The authorization of one ISP client connection (ISP stays on the per-connection calls). New connections always ask; a connection may serve further requests
 * with the same credentials for `cache_ttl_s` without asking again. Each allow holds a lease (one open connection),
 * released when the decision is replaced and when the connection closes; a sticky session's release names the exit
 * the connection used, which pins the session for later decisions.
 */
export class ConnectionAuth {
  #api: Pick<ApiClient, "authorize" | "release">;
  #sourceIp: string;
  #cached: { key: string; decision: AuthorizeAllowed; until: number } | null = null;
  #exit: UsedExit | null = null;

  constructor(api: Pick<ApiClient, "authorize" | "release">, sourceIp: string) {
    this.#api = api;
    this.#sourceIp = sourceIp;
  }

  async decide({ username, password, product, destIp }: IspCredentials): Promise<AuthorizeAllowed | Refused> {
    const key = `${product}\n${destIp ?? ""}\n${username}\n${password ?? ""}`;
    const cached = this.#cached;
    if (cached && cached.key === key && performance.now() < cached.until) return cached.decision;

    let decision: AuthorizeDecision;
    try {
      decision = await this.#api.authorize({
        username,
        password: password || null,
        source_ip: this.#sourceIp,
        product,
        ...(destIp ? { dest_ip: destIp } : {}),
      });
    } catch (error) {
      console.error(`[gateway] authorize failed: ${(error as Error).message}`);
      return AUTH_UNAVAILABLE;
    }
    if (!decision.allow) return decision;
    this.close();
    this.#cached = { key, decision, until: performance.now() + decision.cache_ttl_s * 1000 };
    return decision;
  }

  /** The exit the current decision's requests leave from (a sticky session's is named when its lease is released). */
  useExit(exit: UsedExit): void {
    this.#exit = exit;
  }

  /**
   * A tunnel carries no requests the gateway can see, so while it is open its decision is renewed every
   * `cache_ttl_s`; a refusal closes it (`onRefused`). Returns what stops the watch.
   */
  watch(credentials: IspCredentials, onRefused: () => void): () => void {
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
  close(): void {
    const decision = this.#cached?.decision;
    const exit = decision?.session ? this.#exit : null;
    this.#cached = null;
    this.#exit = null;
    if (!decision?.lease) return;
    this.#api
      .release(decision.lease, exit)
      .catch((error: Error) => console.error(`[gateway] release failed: ${error.message}`));
  }
}

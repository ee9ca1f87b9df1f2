/**
 * What an `ApiKeyGuard` and its callers share: the key's configuration, the admission verdicts and the idempotency
 * records. Pure types: no Durable Object code, so the API may import it anywhere.
 */

/** A caller's rate limits: an exact 60-second window and a 24-hour window (null: no daily limit). */
export interface WindowLimits {
  perMinute: number;
  perDay: number | null;
}

export interface WindowVerdict {
  allowed: boolean;
  /** Limit, remaining and reset (epoch seconds) of the window with the lower remaining. */
  limit: number;
  remaining: number;
  /** The epoch second at which the window's oldest counted request has left it. */
  reset: number;
  /** On a refusal: whole seconds until the oldest request leaves the window (1-60, or 1-86,400 for the day). */
  retryAfter?: number;
}

/** What the guard must know about its key; pushed by whoever changes the key or its account. */
export interface GuardConfig {
  accountId: string;
  plan: string;
  products: string[] | null;
  limits: WindowLimits;
  revoked: boolean;
  /** Per-area access (`read`/`write`); null or absent: a full key. */
  scopes?: Record<string, "read" | "write"> | null;
  /** The sub-users the key is bound to; null or absent: not bound. */
  subuserIds?: string[] | null;
  /** The key answers 401 from this instant (ms); null or absent: never. */
  expiresAt?: number | null;
  /**
   * The token hashes the key accepts: the current one (`until` null) and, after a rotation, the replaced one until
   * its grace ends. Absent (keys configured before rotation existed): the token D1 found is accepted.
   */
  tokens?: Array<{ hash: string; until: number | null }>;
  /**
   * A member's guard (one per member, named by its id): the member's role. Its `tokens` are then the member's live
   * sessions (`until`: a session's absolute end), so ending a session is in force on the next call everywhere.
   */
  role?: string | null;
  /** A key a developer made: it sees and manages only the keys that developer made (the developer's id). */
  keysOf?: string | null;
}

/** A response kept for idempotent replays. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The body is sealed (AES-GCM, by the caller): the response showed a secret. */
  sealed?: boolean;
}

export interface IdempotencyRequest {
  key: string;
  /** Hash of method, path and body: the same key with another request is refused. */
  fingerprint: string;
}

export type IdempotencyClaim =
  | { state: "none" }
  | { state: "claimed"; token: string }
  | { state: "replay"; response: StoredResponse }
  | { state: "in_flight" }
  | { state: "mismatch" };

export type AdmitResult =
  | { outcome: "unconfigured" }
  | { outcome: "revoked" }
  | { outcome: "limited"; rate: WindowVerdict }
  | {
      outcome: "admitted";
      rate: WindowVerdict;
      config: GuardConfig;
      /** True at most once a minute: the caller then records the account's last login. */
      touchLogin: boolean;
      /**
       * `<epoch>.<version>`: the latest version of the account row this guard was told of. Callers may reuse an
       * account read at the same revision.
       */
      accountRevision: string;
      idempotency: IdempotencyClaim;
    };

/** What the request did, told to its guard once it has finished. */
export interface Settlement {
  /** The idempotency claim to complete (with the response to replay) or to forget (response null). */
  claim?: { key: string; token: string; response: StoredResponse | null };
  /** The request wrote the account row, which is now at this version: cached reads of older ones are stale. */
  accountVersion?: number;
}

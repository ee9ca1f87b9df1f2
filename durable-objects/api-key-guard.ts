import { DurableObject } from "cloudflare:workers";
import { DAY, MINUTE, now, SECOND } from "../src/platform/clock";
import { randomString } from "../src/platform/crypto";
import { RollingWindows, type WindowLimits, type WindowVerdict } from "./rolling-window";

/** What the guard must know about its key; pushed by whoever changes the key or its account. */
export interface GuardConfig {
  accountId: string;
  plan: string;
  products: string[] | null;
  limits: WindowLimits;
  revoked: boolean;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
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
      /** Changes whenever the account's data changes: callers may reuse an account read at the same revision. */
      accountRevision: string;
      idempotency: IdempotencyClaim;
    };

/** How long a claimed key stays locked if its request never finishes (a crashed worker). */
export const IDEMPOTENCY_LEASE_MS = 60 * SECOND;
/** How long a finished response is replayed. */
export const IDEMPOTENCY_TTL_MS = DAY;
const LOGIN_TOUCH_INTERVAL_MS = MINUTE;
const STORAGE_PRUNE_INTERVAL_MS = 10 * SECOND;

/**
 * One per API key. Every authenticated request makes exactly one call here (`admit`):
 * revocation check, both rolling rate-limit windows and the idempotency claim, decided
 * atomically because a Durable Object runs one call at a time and nothing here awaits.
 */
export class ApiKeyGuard extends DurableObject {
  private readonly sql: SqlStorage;
  private config: GuardConfig | null = null;
  private windows!: RollingWindows;
  private lastLoginTouch = 0;
  // A fresh epoch per instance: after a restart no cached account read can match an old revision.
  private readonly epoch = randomString(8);
  private accountRevision = 0;
  private lastStoragePrune = 0;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS config (id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS hits (second INTEGER PRIMARY KEY, count INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS idempotency (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        token TEXT,
        locked_until INTEGER,
        response TEXT,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS idempotency_expiry ON idempotency (expires_at);
    `);
    const stored = this.sql.exec<{ value: string }>("SELECT value FROM config WHERE id = 1").toArray()[0];
    this.config = stored ? (JSON.parse(stored.value) as GuardConfig) : null;
    const buckets = this.sql.exec<{ second: number; count: number }>("SELECT second, count FROM hits ORDER BY second");
    this.windows = RollingWindows.fromBuckets(buckets, now());
  }

  configure(config: GuardConfig): void {
    this.config = config;
    this.sql.exec("INSERT OR REPLACE INTO config (id, value) VALUES (1, ?)", JSON.stringify(config));
  }

  admit(idempotency: IdempotencyRequest | null): AdmitResult {
    const config = this.config;
    if (!config) return { outcome: "unconfigured" };
    if (config.revoked) return { outcome: "revoked" };

    const at = now();
    const rate = this.windows.admit(at, config.limits);
    this.pruneStorage(at);
    if (!rate.allowed) return { outcome: "limited", rate };
    this.sql.exec(
      "INSERT INTO hits (second, count) VALUES (?, 1) ON CONFLICT (second) DO UPDATE SET count = count + 1",
      Math.floor(at / SECOND),
    );

    const touchLogin = at - this.lastLoginTouch >= LOGIN_TOUCH_INTERVAL_MS;
    if (touchLogin) this.lastLoginTouch = at;

    return {
      outcome: "admitted",
      rate,
      config,
      touchLogin,
      accountRevision: `${this.epoch}.${this.accountRevision}`,
      idempotency: idempotency ? this.claim(idempotency, at) : { state: "none" },
    };
  }

  /** The account's data changed (balance, profile, MFA, login): reads cached at older revisions are stale. */
  accountChanged(): void {
    this.accountRevision++;
  }

  /** Stores the finished response of a claimed key, for replay. */
  complete(key: string, token: string, response: StoredResponse): void {
    const at = now();
    this.sql.exec(
      "UPDATE idempotency SET response = ?, token = NULL, locked_until = NULL, expires_at = ? WHERE key = ? AND token = ?",
      JSON.stringify(response),
      at + IDEMPOTENCY_TTL_MS,
      key,
      token,
    );
  }

  /** Forgets a claimed key whose request must not be remembered (validation error, server error). */
  release(key: string, token: string): void {
    this.sql.exec("DELETE FROM idempotency WHERE key = ? AND token = ?", key, token);
  }

  private claim({ key, fingerprint }: IdempotencyRequest, at: number): IdempotencyClaim {
    const row = this.sql
      .exec<{ fingerprint: string; locked_until: number | null; response: string | null; expires_at: number }>(
        "SELECT fingerprint, locked_until, response, expires_at FROM idempotency WHERE key = ?",
        key,
      )
      .toArray()[0];
    const live = row && row.expires_at > at ? row : undefined;
    if (live && live.fingerprint !== fingerprint) return { state: "mismatch" };
    if (live?.response) return { state: "replay", response: JSON.parse(live.response) as StoredResponse };
    if (live && (live.locked_until ?? 0) > at) return { state: "in_flight" };

    // New key, expired record, or a claim whose lease ran out (its worker crashed): claim afresh.
    const token = randomString(24);
    this.sql.exec(
      "INSERT OR REPLACE INTO idempotency (key, fingerprint, token, locked_until, response, expires_at) VALUES (?, ?, ?, ?, NULL, ?)",
      key,
      fingerprint,
      token,
      at + IDEMPOTENCY_LEASE_MS,
      at + IDEMPOTENCY_TTL_MS,
    );
    return { state: "claimed", token };
  }

  private pruneStorage(at: number): void {
    if (at - this.lastStoragePrune < STORAGE_PRUNE_INTERVAL_MS) return;
    this.lastStoragePrune = at;
    const oldestSecond = this.windows.prune(at);
    this.sql.exec("DELETE FROM hits WHERE second < ?", oldestSecond ?? Math.floor(at / SECOND) + 1);
    this.sql.exec("DELETE FROM idempotency WHERE expires_at <= ?", at);
  }
}

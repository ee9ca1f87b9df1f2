import { DurableObject } from "cloudflare:workers";
import { DAY, MINUTE, now, SECOND } from "../../platform/clock";
import { randomString } from "../../platform/crypto";
import { migrate, type StorageStep } from "../shared/storage-versions";
import type {
  AdmitResult,
  GuardConfig,
  IdempotencyClaim,
  IdempotencyRequest,
  Settlement,
  StoredResponse,
  WindowLimits,
  WindowVerdict,
} from "./contract";
import { type DayBucket, RollingWindows } from "./rolling-window";

/** The guard's storage steps (`migrate`): append, never edit. */
const GUARD_STORAGE: StorageStep[] = [
  // 1: the tables; a guard from before the day buckets still holds `hits`, one row per request.
  (sql) =>
    sql.exec(`
      CREATE TABLE IF NOT EXISTS config (id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL);
      DROP TABLE IF EXISTS hits;
      CREATE TABLE IF NOT EXISTS day_buckets (second INTEGER PRIMARY KEY, count INTEGER NOT NULL, last_ms INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS idempotency (
        key TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        token TEXT,
        locked_until INTEGER,
        response TEXT,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS idempotency_expiry ON idempotency (expires_at);
    `),
];

/** How long a claimed key stays locked if its request never finishes (a crashed worker). */
export const IDEMPOTENCY_LEASE_MS = 60 * SECOND;
/** How long a finished response is replayed. */
export const IDEMPOTENCY_TTL_MS = DAY;
const LOGIN_TOUCH_INTERVAL_MS = MINUTE;
const STORAGE_PRUNE_INTERVAL_MS = 10 * SECOND;

/**
 * One per API key (and one per client address for unauthenticated calls). Every authenticated request makes
 * one call here before its handler (`admit`: revocation, both rolling rate-limit windows, the idempotency
 * claim) and at most one after it (`settle`). A Durable Object runs one call at a time and nothing here
 * awaits, so limits and claims are exact under concurrency. Internals are `#private`: only the public methods
 * can be called over RPC, through `ApiKeyGuardClient`.
 */
export class ApiKeyGuard extends DurableObject {
  readonly #sql: SqlStorage;
  #config: GuardConfig | null = null;
  readonly #windows: RollingWindows;
  #lastLoginTouch = 0;
  // A fresh epoch per instance: after a restart no cached account read can match an old revision.
  readonly #epoch = randomString(8);
  #accountVersion = 0;
  #lastStoragePrune = 0;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    migrate(ctx.storage, "api_key_guard", GUARD_STORAGE);
    const stored = this.#sql.exec<{ value: string }>("SELECT value FROM config WHERE id = 1").toArray()[0];
    this.#config = stored ? (JSON.parse(stored.value) as GuardConfig) : null;
    const buckets = this.#sql
      .exec<{ second: number; count: number; last_ms: number }>(
        "SELECT second, count, last_ms FROM day_buckets ORDER BY second",
      )
      .toArray()
      .map((row) => ({ second: row.second, count: row.count, lastMs: row.last_ms }));
    this.#windows = RollingWindows.fromBuckets(buckets, now());
  }

  configure(config: GuardConfig): void {
    this.#config = config;
    this.#sql.exec("INSERT OR REPLACE INTO config (id, value) VALUES (1, ?)", JSON.stringify(config));
  }

  /**
   * Admits a request of the key. `config` (loaded from D1 by the client after an `unconfigured` answer) applies
   * only while the guard is still unconfigured: a change pushed meanwhile (a revocation) is newer than that load.
   */
  admit(idempotency: IdempotencyRequest | null, config?: GuardConfig): AdmitResult {
    if (config && !this.#config) this.configure(config);
    const current = this.#config;
    if (!current) return { outcome: "unconfigured" };
    if (current.revoked) return { outcome: "revoked" };

    const at = now();
    const rate = this.#count(at, current.limits);
    if (!rate.allowed) return { outcome: "limited", rate };

    const touchLogin = at - this.#lastLoginTouch >= LOGIN_TOUCH_INTERVAL_MS;
    if (touchLogin) this.#lastLoginTouch = at;
    return {
      outcome: "admitted",
      rate,
      config: current,
      touchLogin,
      accountRevision: this.#revision(),
      idempotency: idempotency ? this.#claim(idempotency, at) : { state: "none" },
    };
  }

  /** Counts an unauthenticated call from one client address against `limits`. */
  admitUnauthenticated(limits: WindowLimits): WindowVerdict {
    return this.#count(now(), limits);
  }

  /**
   * Completes or forgets the request's idempotency claim, and learns the account version it wrote. Returns the
   * account revision after that.
   */
  settle(settlement: Settlement): string {
    if (settlement.accountVersion !== undefined) this.accountChanged(settlement.accountVersion);
    const claim = settlement.claim;
    if (claim?.response === null) {
      this.#sql.exec("DELETE FROM idempotency WHERE key = ? AND token = ?", claim.key, claim.token);
    } else if (claim) {
      this.#sql.exec(
        "UPDATE idempotency SET response = ?, token = NULL, locked_until = NULL, expires_at = ? WHERE key = ? AND token = ?",
        JSON.stringify(claim.response),
        now() + IDEMPOTENCY_TTL_MS,
        claim.key,
        claim.token,
      );
    }
    return this.#revision();
  }

  /** The account row was written and is now at `version`: reads cached at older revisions are stale. */
  accountChanged(version: number): void {
    this.#accountVersion = Math.max(this.#accountVersion, version);
  }

  #revision(): string {
    return `${this.#epoch}.${this.#accountVersion}`;
  }

  #count(at: number, limits: WindowLimits): WindowVerdict {
    const rate = this.#windows.admit(at, limits);
    this.#pruneStorage(at);
    const bucket: DayBucket | undefined = rate.allowed ? this.#windows.currentBucket(at) : undefined;
    if (bucket) {
      this.#sql.exec(
        "INSERT OR REPLACE INTO day_buckets (second, count, last_ms) VALUES (?, ?, ?)",
        bucket.second,
        bucket.count,
        bucket.lastMs,
      );
    }
    return rate;
  }

  #claim({ key, fingerprint }: IdempotencyRequest, at: number): IdempotencyClaim {
    const row = this.#sql
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
    this.#sql.exec(
      "INSERT OR REPLACE INTO idempotency (key, fingerprint, token, locked_until, response, expires_at) VALUES (?, ?, ?, ?, NULL, ?)",
      key,
      fingerprint,
      token,
      at + IDEMPOTENCY_LEASE_MS,
      at + IDEMPOTENCY_TTL_MS,
    );
    return { state: "claimed", token };
  }

  #pruneStorage(at: number): void {
    if (at - this.#lastStoragePrune < STORAGE_PRUNE_INTERVAL_MS) return;
    this.#lastStoragePrune = at;
    const oldestSecond = this.#windows.prune(at);
    this.#sql.exec("DELETE FROM day_buckets WHERE second < ?", oldestSecond ?? Math.floor(at / SECOND) + 1);
    this.#sql.exec("DELETE FROM idempotency WHERE expires_at <= ?", at);
  }
}

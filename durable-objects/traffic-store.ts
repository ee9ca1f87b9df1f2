import { DurableObject } from "cloudflare:workers";
import { DAY, MINUTE, now } from "../src/platform/clock";
import { RequestLog } from "./request-log";
import { type SessionFilters, SessionIndex } from "./session-index";
import { Rollups, type TrafficQuery, type TrafficRow } from "./traffic-rollups";
import type { Cell, RequestSample, SampleCandidate, SessionSnapshot, TrafficProduct } from "./traffic-types";

/** What one usage message brings to its account's store. */
export interface StoreIngest {
  key: string;
  cells: Cell[];
  samples: SampleCandidate[];
  sessions: SessionSnapshot[];
}

/** Pending rollups are folded into the coarser tiers this often. */
const FOLD_INTERVAL_MS = MINUTE;
/** With no new usage, what is past its horizon is still forgotten this often. */
const PRUNE_INTERVAL_MS = 60 * MINUTE;
/** Usage messages applied, kept as long as the queue may redeliver them. */
const APPLIED_KEPT_MS = 7 * DAY;

/**
 * One per account (`idFromName(accountId)`): its traffic rollups, its sampled request log and the index of its
 * sticky sessions (SQLite storage). A usage message is applied once, in one synchronous step, so a crash either
 * applied all of it or none; its key is remembered for the queue's redelivery horizon. Internals are `#private`;
 * callers use `TrafficStoreClient`.
 */
export class TrafficStore extends DurableObject {
  readonly #sql: SqlStorage;
  readonly #rollups: Rollups;
  readonly #log: RequestLog;
  readonly #sessions: SessionIndex;
  #alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS usage_applied (key TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    this.#rollups = new Rollups(this.#sql);
    this.#log = new RequestLog(this.#sql);
    this.#sessions = new SessionIndex(this.#sql);
  }

  /** Applies a usage message once; returns false when it was applied before (its session copies still land). */
  ingest(message: StoreIngest): boolean {
    const at = now();
    this.#sessions.upsert(message.sessions);
    const seen = this.#sql.exec("SELECT 1 FROM usage_applied WHERE key = ?", message.key).toArray().length > 0;
    if (seen) return false;
    this.#sql.exec("INSERT INTO usage_applied (key, at) VALUES (?, ?)", message.key, at);
    this.#rollups.ingest(message.cells);
    this.#log.add(message.samples, (minute) =>
      Math.max(this.#rollups.requestsInMinute(minute), this.#rollups.requestsInMinute(minute - MINUTE)),
    );
    this.#wakeBy(at + FOLD_INTERVAL_MS);
    return true;
  }

  upsertSessions(snapshots: SessionSnapshot[]): void {
    this.#sessions.upsert(snapshots);
  }

  traffic(query: TrafficQuery): TrafficRow[] {
    return this.#rollups.query(query, now());
  }

  requests(query: { product: TrafficProduct; subuserId?: string; limit: number }): RequestSample[] {
    return this.#log.list(query, now());
  }

  listSessions(filters: SessionFilters): SessionSnapshot[] {
    return this.#sessions.list(filters, now());
  }

  session(id: string): SessionSnapshot | null {
    return this.#sessions.find(id);
  }

  /**
   * Folds pending rollups and forgets what is past its horizon; while usage keeps arriving that is every minute,
   * after the last of it hourly until nothing is left to forget.
   */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    const at = now();
    this.#rollups.fold(at);
    this.#log.prune(at);
    this.#sessions.prune(at);
    this.#sql.exec("DELETE FROM usage_applied WHERE at <= ?", at - APPLIED_KEPT_MS);
    if (this.#rollups.holdsData()) this.#wakeBy(at + PRUNE_INTERVAL_MS);
  }

  #wakeBy(at: number): void {
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }
}

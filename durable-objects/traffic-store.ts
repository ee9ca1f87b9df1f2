import { DurableObject } from "cloudflare:workers";
import { DAY, MINUTE, now } from "../src/platform/clock";
import { RequestLog } from "./request-log";
import { type SessionFilters, SessionIndex } from "./session-index";
import {
  type IpHealth,
  type ReportScope,
  type TrafficDayCursor,
  type TrafficDayRow,
  TrafficReports,
} from "./traffic-reports";
import { PENDING_FOLD_ROWS, Rollups, type TrafficQuery, type TrafficRow } from "./traffic-rollups";
import type { Cell, RequestSample, SampleCandidate, SessionSnapshot, TrafficProduct } from "./traffic-types";

/** What one usage message brings to its account's store. */
export interface StorePart {
  key: string;
  cells: Cell[];
  samples: SampleCandidate[];
}

/** What a consumer batch brings to one account's store: its usage messages, and the sessions they touched. */
export interface StoreIngest {
  parts: StorePart[];
  sessions: SessionSnapshot[];
}

/** Pending rollups are folded into the tiers this often (sooner past PENDING_FOLD_ROWS). */
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
  readonly #reports: TrafficReports;
  #alarmAt: number | null = null;
  /** Rows appended to `pending` since the last fold (this instance's count; a restart folds at the next alarm). */
  #pendingRows = 0;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS usage_applied (key TEXT PRIMARY KEY, at INTEGER NOT NULL)");
    this.#rollups = new Rollups(this.#sql);
    this.#log = new RequestLog(this.#sql);
    this.#sessions = new SessionIndex(this.#sql);
    this.#reports = new TrafficReports(this.#sql);
  }

  /**
   * Applies usage messages, each once (one set-based write for all of them); returns how many were new. The
   * session copies always land (a newer copy wins).
   */
  ingest(message: StoreIngest): number {
    const at = now();
    this.#sessions.upsert(message.sessions);
    const applied = new Set(
      this.#sql
        .exec<{ key: string }>(
          "SELECT key FROM usage_applied WHERE key IN (SELECT value FROM json_each(?))",
          JSON.stringify(message.parts.map((part) => part.key)),
        )
        .toArray()
        .map((row) => row.key),
    );
    const fresh = message.parts.filter((part) => !applied.has(part.key));
    if (fresh.length === 0) return 0;
    this.#sql.exec(
      "INSERT OR IGNORE INTO usage_applied (key, at) SELECT value, ? FROM json_each(?)",
      at,
      JSON.stringify(fresh.map((part) => part.key)),
    );
    const cells = fresh.flatMap((part) => part.cells);
    this.#pendingRows += this.#rollups.ingest(cells);
    this.#log.add(
      fresh.flatMap((part) => part.samples),
      [...new Set(cells.map((cell) => cell.minute))],
      (minute) => this.#rollups.requestsInMinute(minute),
      at,
    );
    this.#wakeBy(this.#pendingRows > PENDING_FOLD_ROWS ? at : at + FOLD_INTERVAL_MS);
    return fresh.length;
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

  /** Report files (read-only, paged): usage per day, product and sub-user. */
  reportTrafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number): TrafficDayRow[] {
    return this.#reports.trafficDays(scope, cursor, limit, now());
  }

  /** Report files (read-only, paged): the sampled request log of a range, oldest first. */
  reportRequestLog(
    scope: ReportScope,
    cursor: { ts: number; requestId: string } | null,
    limit: number,
  ): RequestSample[] {
    return this.#log.range(scope, cursor, limit, now());
  }

  /** Report files: requests, errors and last activity of ISP IPs. */
  reportIpHealth(ips: string[], from: number, to: number): IpHealth[] {
    return this.#reports.ipHealth(ips, from, to, now());
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
    this.#pendingRows = 0;
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

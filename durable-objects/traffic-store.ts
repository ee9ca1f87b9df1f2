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
import type {
  Cell,
  MeterFigures,
  RequestSample,
  SampleCandidate,
  SessionSnapshot,
  Settlement,
  TrafficProduct,
} from "./traffic-types";
import { SETTLE_INTERVAL_MS, UsageMeter } from "./usage-meter";

/** What one usage part brings to its account's store. */
export interface StorePart {
  key: string;
  cells: Cell[];
  samples: SampleCandidate[];
}

/** What a consumer batch brings to one account's store: its usage parts, and the sessions they touched. */
export interface StoreIngest {
  accountId: string;
  parts: StorePart[];
  sessions: SessionSnapshot[];
}

/**
 * `unconfigured`: the store has not started metering; call again with the account's figures from D1. `applied`:
 * how many parts were new, and the settlement to hand to D1 now, if one is due.
 */
export type IngestOutcome =
  | { outcome: "unconfigured" }
  | { outcome: "applied"; applied: number; settlement: Settlement | null };

/** Pending rollups are folded into the tiers this often (sooner past PENDING_FOLD_ROWS). */
const FOLD_INTERVAL_MS = MINUTE;
/** With no new usage, what is past its horizon is still forgotten this often. */
const PRUNE_INTERVAL_MS = 60 * MINUTE;
/** Usage messages applied, kept as long as the queue may redeliver them. */
const APPLIED_KEPT_MS = 7 * DAY;

/**
 * One per account (`idFromName(accountId)`): its traffic rollups, its sampled request log, the index of its
 * sticky sessions and its usage meter (SQLite storage). A usage part is applied once, in one synchronous step —
 * rollups, log and meter together — so a crash either applied all of it or none; its key is remembered for the
 * queue's redelivery horizon. The meter's settlements go to D1 through the caller (the usage consumer), or, when
 * usage stops arriving, through a `settle` message the alarm sends on the usage queue. Internals are `#private`;
 * callers use `TrafficStoreClient`.
 */
export class TrafficStore extends DurableObject {
  readonly #sql: SqlStorage;
  readonly #rollups: Rollups;
  readonly #log: RequestLog;
  readonly #sessions: SessionIndex;
  readonly #reports: TrafficReports;
  readonly #meter: UsageMeter;
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
    this.#meter = new UsageMeter(this.#sql);
  }

  /**
   * Applies usage parts, each once (distinct keys not applied before; one set-based write for all of them), and
   * meters them. The session copies always land (a newer copy wins). `figures` start the meter on first use.
   */
  ingest(input: StoreIngest, figures?: MeterFigures): IngestOutcome {
    if (!this.#meter.configured) {
      if (!figures) return { outcome: "unconfigured" };
      this.#meter.configure(input.accountId, figures);
    }
    const at = now();
    this.#sessions.upsert(input.sessions);
    const keys = [...new Set(input.parts.map((part) => part.key))];
    const applied = new Set(
      this.#sql
        .exec<{ key: string }>(
          "SELECT key FROM usage_applied WHERE key IN (SELECT value FROM json_each(?))",
          JSON.stringify(keys),
        )
        .toArray()
        .map((row) => row.key),
    );
    const fresh = input.parts.filter((part) => !applied.has(part.key) && applied.add(part.key));
    if (fresh.length === 0) return { outcome: "applied", applied: 0, settlement: this.#meter.settlement(at, false) };
    this.#sql.exec(
      "INSERT OR IGNORE INTO usage_applied (key, at) SELECT value, ? FROM json_each(?)",
      at,
      JSON.stringify(fresh.map((part) => part.key)),
    );
    const { cells, samples } = this.#meter.admit(
      fresh.flatMap((part) => part.cells),
      fresh.flatMap((part) => part.samples),
      at,
    );
    this.#pendingRows += this.#rollups.ingest(cells);
    this.#log.add(
      samples,
      [...new Set(cells.map((cell) => cell.minute))],
      (minute) => this.#rollups.requestsInMinute(minute),
      at,
    );
    const settlement = this.#meter.settlement(at, this.#meter.meter(cells));
    this.#wakeBy(this.#pendingRows > PENDING_FOLD_ROWS ? at : at + FOLD_INTERVAL_MS);
    this.#wakeForMeter();
    return { outcome: "applied", applied: fresh.length, settlement };
  }

  /** The settlement to hand to D1 now (a `settle` message asked): what is metered and not settled, if anything. */
  settlement(): Settlement | null {
    return this.#meter.settlement(now(), true);
  }

  /**
   * D1 applied settlement `seq` and answered with its figures. Returns the next settlement when usage metered
   * meanwhile already passes a threshold (hand it over at once), else null.
   */
  confirmSettlement(seq: number, figures: MeterFigures): Settlement | null {
    const at = now();
    const again = this.#meter.confirm(seq, figures, at);
    this.#wakeForMeter();
    return again ? this.#meter.settlement(at, true) : null;
  }

  /** D1's figures as they changed (a top-up, a cap, a deletion); ignored before the meter starts. */
  learnFigures(figures: Partial<MeterFigures>): void {
    if (this.#meter.configured) this.#meter.learn(figures);
  }

  /** Usage dropped per day: a deleted sub-user's, past its drain. */
  droppedUsage(): Array<{ day: number; records: number; bytes: number }> {
    return this.#meter.dropped();
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
    this.#meter.prune(at);
    this.#sql.exec("DELETE FROM usage_applied WHERE at <= ?", at - APPLIED_KEPT_MS);
    if (this.#rollups.holdsData()) this.#wakeBy(at + PRUNE_INTERVAL_MS);
    await this.#askForSettlement(at);
  }

  /**
   * Usage stopped arriving with some of it not settled: a `settle` message asks the usage consumer to hand it
   * to D1 (the store itself never writes D1). If sending fails the alarm is retried; a message sent twice settles
   * once.
   */
  async #askForSettlement(at: number): Promise<void> {
    const due = this.#meter.nextCheck();
    const accountId = this.#meter.accountId;
    if (due === null || accountId === null) return;
    if (due > at) {
      this.#wakeBy(due);
      return;
    }
    this.#wakeBy(at + SETTLE_INTERVAL_MS);
    await this.env.USAGE_QUEUE.send(JSON.stringify({ settle: accountId }), { contentType: "text" });
  }

  /** Wakes when the meter's next settlement is due by time. */
  #wakeForMeter(): void {
    const due = this.#meter.nextCheck();
    if (due !== null) this.#wakeBy(due);
  }

  #wakeBy(at: number): void {
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }
}

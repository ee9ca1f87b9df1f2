import { DAY, MINUTE, utcMonth } from "../../platform/clock";
import { type AreaStorage, migrate, type StorageStep } from "../shared/storage-versions";
import { ClientSources } from "./client-sources";
import type {
  IngestOutcome,
  IpHealth,
  MeterFigures,
  ReportScope,
  RequestSample,
  SessionFilters,
  SessionSnapshot,
  Settlement,
  SourceAlertReceipt,
  SourceEntry,
  StoreIngest,
  TrafficDayCursor,
  TrafficDayRow,
  TrafficProduct,
  TrafficQuery,
  TrafficRow,
} from "./contract";
import { DomainRollups } from "./domain-rollups";
import { RequestLog } from "./request-log";
import { SessionIndex } from "./session-index";
import { TrafficReports } from "./traffic-reports";
import { PENDING_FOLD_ROWS, Rollups } from "./traffic-rollups";
import { SETTLE_INTERVAL_MS, UsageMeter } from "./usage-meter";

/** Pending rollups are folded into the tiers this often (sooner past PENDING_FOLD_ROWS). */
const FOLD_INTERVAL_MS = MINUTE;
/** With no new usage, what is past its horizon is still forgotten this often. */
const PRUNE_INTERVAL_MS = 60 * MINUTE;
/**
 * Usage parts applied, kept a day: the usage route enqueues a batch once it is recorded (kept 7 days), so copies
 * reach a store only from posts racing the first one and from the queue's redeliveries, within minutes of it.
 */
const APPLIED_KEPT_MS = DAY;

/** The storage steps of the store's own table (`migrate`; each part has its own): append, never edit. */
const APPLIED_STORAGE: StorageStep[] = [
  // 1: the table.
  (sql) => sql.exec("CREATE TABLE IF NOT EXISTS usage_applied (key TEXT PRIMARY KEY, at INTEGER NOT NULL)"),
];

/**
 * One account's traffic over one SQLite database, synchronous: its rollups, sampled request log, session index
 * and usage meter. The `TrafficStore` Durable Object serves it (and wakes when `nextWake` says); the scale
 * simulation runs the same code on `node:sqlite`. A usage part is applied once, in one synchronous step — rollups,
 * log and meter together — so a crash either applied all of it or none; its key is remembered for the queue's
 * redelivery horizon.
 */
export class AccountTraffic {
  readonly #sql: SqlStorage;
  readonly #rollups: Rollups;
  readonly #domains: DomainRollups;
  readonly #sources: ClientSources;
  readonly #log: RequestLog;
  readonly #sessions: SessionIndex;
  readonly #reports: TrafficReports;
  readonly #meter: UsageMeter;
  /** Rows appended to `pending` since the last fold (this instance's count; a restart folds at the next wake). */
  #pendingRows = 0;
  #foldBy: number | null = null;
  #pruneBy: number | null = null;
  /** When a `settle` message was last asked for (asked again a settlement interval later if still due). */
  #settleAskedAt: number | null = null;

  constructor(storage: AreaStorage) {
    const sql = storage.sql;
    this.#sql = sql;
    migrate(storage, "usage_applied", APPLIED_STORAGE);
    this.#rollups = new Rollups(storage);
    this.#domains = new DomainRollups(storage);
    this.#sources = new ClientSources(storage);
    this.#log = new RequestLog(storage);
    this.#sessions = new SessionIndex(storage);
    this.#reports = new TrafficReports(sql);
    this.#meter = new UsageMeter(storage);
  }

  /**
   * Applies usage parts, each once (distinct keys not applied before; one set-based write for all of them), and
   * meters them. The session copies always land (a newer copy wins). `figures` start the meter on first use.
   */
  ingest(input: StoreIngest, figures: MeterFigures | undefined, at: number): IngestOutcome {
    if (!this.#meter.configured) {
      if (!figures) return { outcome: "unconfigured" };
      this.#startMonths(this.#meter.configure(input.accountId, figures), at);
    }
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
    if (fresh.length === 0) {
      this.#sources.ingest([], at);
      const settlement = this.#meter.settlement(at, false);
      return { outcome: "applied", applied: 0, settlement, sourceAlerts: this.#sources.alerts() };
    }
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
    // A deleted sub-user's usage past its drain counts nowhere: nor in domains, nor as a source.
    const domains = fresh.flatMap((part) => part.domains ?? []);
    this.#domains.ingest(this.#meter.admitted(domains, (cell) => cell.minute));
    const sources = fresh.flatMap((part) => part.sources ?? []);
    this.#sources.ingest(
      this.#meter.admitted(sources, (source) => source.firstSeen),
      at,
    );
    this.#log.add(
      samples,
      [...new Set(cells.map((cell) => cell.minute))],
      (minute) => this.#rollups.requestsInMinute(minute),
      at,
    );
    const settlement = this.#meter.settlement(at, this.#meter.meter(cells));
    const foldBy = this.#pendingRows > PENDING_FOLD_ROWS ? at : at + FOLD_INTERVAL_MS;
    this.#foldBy = Math.min(this.#foldBy ?? foldBy, foldBy);
    return { outcome: "applied", applied: fresh.length, settlement, sourceAlerts: this.#sources.alerts() };
  }

  /** The settlement to hand to D1 now (a `settle` message asked): what is metered and not settled, if anything. */
  settlement(at: number): Settlement | null {
    return this.#meter.settlement(at, true);
  }

  /**
   * D1 applied settlement `seq` and answered with its figures. Returns the next settlement when usage metered
   * meanwhile already passes a threshold (hand it over at once), else null.
   */
  confirmSettlement(seq: number, figures: MeterFigures, at: number): Settlement | null {
    this.#settleAskedAt = null;
    return this.#meter.confirm(seq, figures, at) ? this.#meter.settlement(at, true) : null;
  }

  /**
   * D1's figures as they changed (a top-up, a cap, a deletion); ignored before the meter starts. A sub-user capped
   * now is metered from its month as the rollups count it; returns the settlement due at once if that passes a
   * threshold of its cap.
   */
  learnFigures(figures: Partial<MeterFigures>, at: number): Settlement | null {
    if (!this.#meter.configured) return null;
    return this.#startMonths(this.#meter.learn(figures), at) ? this.#meter.settlement(at, true) : null;
  }

  /**
   * Each sub-user's usage (bytes in + out, all products) in the UTC month of `at`, from the rollups: exact for
   * every sub-user, capped or not, and never behind the store's own counts.
   */
  monthUsage(subuserIds: string[], at: number): Record<string, number> {
    const now = new Date(at);
    const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
    const to = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    const wanted = new Set(subuserIds);
    const usage: Record<string, number> = Object.fromEntries(subuserIds.map((id) => [id, 0]));
    for (const product of ["residential", "mobile", "isp"] as const) {
      const rows = this.#rollups.query({ product, from, to, resolution: "1h", groupBy: "subuser", filters: {} }, at);
      for (const row of rows) {
        const id = String(row.key);
        if (wanted.has(id)) usage[id] = (usage[id] ?? 0) + row.bytesIn + row.bytesOut;
      }
    }
    return usage;
  }

  /** Starts metering newly capped sub-users' months from the rollups; whether one passes a threshold. */
  #startMonths(subuserIds: string[], at: number): boolean {
    if (subuserIds.length === 0) return false;
    const usage = this.monthUsage(subuserIds, at);
    const month = utcMonth(at);
    return subuserIds
      .map((id) => this.#meter.startMonth(id, month, usage[id] ?? 0))
      .reduce((any, rises) => any || rises, false);
  }

  /** Usage dropped per day: a deleted sub-user's, past its drain. */
  droppedUsage(): Array<{ day: number; records: number; bytes: number }> {
    return this.#meter.dropped();
  }

  upsertSessions(snapshots: SessionSnapshot[]): void {
    this.#sessions.upsert(snapshots);
  }

  traffic(query: TrafficQuery, at: number): TrafficRow[] {
    return query.groupBy === "domain" ? this.#domains.query(query) : this.#rollups.query(query, at);
  }

  /** A sub-user's client blocks of the last 30 days (`SourceEntry`), newest first seen first. */
  clientSources(
    subuserId: string,
    after: { firstSeen: number; block: string } | null,
    limit: number,
    at: number,
  ): SourceEntry[] {
    return this.#sources.list(subuserId, after, limit, at);
  }

  /** The caller recorded these `subuser.new_source` alerts. */
  confirmSourceAlerts(alerts: SourceAlertReceipt[]): void {
    this.#sources.confirm(alerts);
  }

  requests(query: { product: TrafficProduct; subuserId?: string; limit: number }, at: number): RequestSample[] {
    return this.#log.list(query, at);
  }

  reportTrafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number, at: number): TrafficDayRow[] {
    return this.#reports.trafficDays(scope, cursor, limit, at);
  }

  reportRequestLog(
    scope: ReportScope,
    cursor: { ts: number; requestId: string } | null,
    limit: number,
    at: number,
  ): RequestSample[] {
    return this.#log.range(scope, cursor, limit, at);
  }

  reportIpHealth(ips: string[], from: number, to: number, at: number): IpHealth[] {
    return this.#reports.ipHealth(ips, from, to, at);
  }

  listSessions(filters: SessionFilters, at: number): SessionSnapshot[] {
    return this.#sessions.list(filters, at);
  }

  session(id: string): SessionSnapshot | null {
    return this.#sessions.find(id);
  }

  /**
   * The store's periodic work: folds pending rollups and forgets what is past its horizon (every minute while
   * usage arrives, then hourly until nothing is left). Returns the account whose metered usage should be settled
   * by a `settle` message now (usage stopped arriving with some of it not settled), if any.
   */
  maintain(at: number): string | null {
    this.#foldBy = null;
    this.#rollups.fold(at);
    this.#domains.prune(at);
    this.#sources.prune(at);
    this.#pendingRows = 0;
    this.#log.prune(at);
    this.#sessions.prune(at);
    this.#meter.prune(at);
    this.#sql.exec("DELETE FROM usage_applied WHERE at <= ?", at - APPLIED_KEPT_MS);
    this.#pruneBy = this.#rollups.holdsData() ? at + PRUNE_INTERVAL_MS : null;
    const due = this.#meterDue();
    if (due === null || due > at) return null;
    this.#settleAskedAt = at;
    return this.#meter.accountId;
  }

  /** When the store next needs `maintain` (a fold, a prune, a settlement due), or null. */
  nextWake(): number | null {
    const times = [this.#foldBy, this.#pruneBy, this.#meterDue()].filter((t): t is number => t !== null);
    return times.length > 0 ? Math.min(...times) : null;
  }

  #meterDue(): number | null {
    const due = this.#meter.nextCheck();
    if (due === null || this.#settleAskedAt === null) return due;
    return Math.max(due, this.#settleAskedAt + SETTLE_INTERVAL_MS);
  }
}

import { DurableObject } from "cloudflare:workers";
import { now } from "../../platform/clock";
import { takeFault } from "../../platform/faults";
import { Alarm } from "../shared/alarm";
import { AccountTraffic } from "./account-traffic";
import type {
  IngestOutcome,
  IpHealth,
  Lesson,
  MeterFigures,
  PeriodUsage,
  ReportScope,
  RequestLogQuery,
  RequestSample,
  SessionFilters,
  SessionRequest,
  SessionSnapshot,
  SettleMessage,
  Settlement,
  SourceAlertReceipt,
  SourceEntry,
  SpikeAlert,
  SpikeAlertReceipt,
  SpikeSetting,
  StoreIngest,
  TrafficDayCursor,
  TrafficDayRow,
  TrafficQuery,
  TrafficRow,
} from "./contract";

/**
 * One per account (`idFromName(accountId)`), or per shard of a busy account (`store-shards.ts`): the account's traffic (`AccountTraffic`: arrival rows, folded tiers,
 * sampled request log, client sources, session index, usage meter) in its SQLite storage. The meter's settlements go to D1 through the caller
 * (the usage consumer), or, when usage stops arriving, through a `settle` message the alarm sends on the usage
 * queue: the store never writes D1 itself. Internals are `#private`; callers use `TrafficStoreClient`.
 */
export class TrafficStore extends DurableObject {
  readonly #traffic: AccountTraffic;
  readonly #alarm: Alarm;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.#traffic = new AccountTraffic(ctx.storage);
    this.#alarm = new Alarm(ctx.storage);
  }

  ingest(input: StoreIngest, figures?: MeterFigures): IngestOutcome {
    const outcome = this.#change(() => this.#traffic.ingest(input, figures, now()));
    this.#wake();
    if (takeFault("store-abort")) this.ctx.abort("injected fault: store-abort");
    return outcome;
  }

  settlement(): Settlement | null {
    return this.#traffic.settlement(now());
  }

  confirmSettlement(seq: number, figures: MeterFigures): Settlement | null {
    const next = this.#change(() => this.#traffic.confirmSettlement(seq, figures, now()));
    this.#wake();
    return next;
  }

  learnFigures(figures: Partial<MeterFigures>): Settlement | null {
    const settlement = this.#change(() => this.#traffic.learnFigures(figures, now()));
    this.#wake();
    return settlement;
  }

  periodUsage(subuserIds: string[]): Record<string, PeriodUsage> {
    return this.#traffic.periodUsage(subuserIds, now());
  }

  droppedUsage(): Array<{ day: number; records: number; bytes: number }> {
    return this.#traffic.droppedUsage();
  }

  upsertSessions(snapshots: SessionSnapshot[]): void {
    this.#change(() => this.#traffic.upsertSessions(snapshots));
  }

  traffic(query: TrafficQuery): TrafficRow[] {
    return this.#traffic.traffic(query);
  }

  clientSources(subuserId: string, after: { firstSeen: number; block: string } | null, limit: number): SourceEntry[] {
    return this.#traffic.clientSources(subuserId, after, limit, now());
  }

  confirmSourceAlerts(alerts: SourceAlertReceipt[]): void {
    this.#change(() => this.#traffic.confirmSourceAlerts(alerts));
  }

  configureSpikes(subuserId: string, setting: SpikeSetting): void {
    this.#change(() => this.#traffic.configureSpikes(subuserId, setting, now()));
    this.#wake();
  }

  teachSpikes(subuserId: string, spikeId: string, lesson: Lesson | null): void {
    this.#change(() => this.#traffic.teachSpikes(subuserId, spikeId, lesson));
  }

  spikeAlerts(): SpikeAlert[] {
    return this.#traffic.spikeAlerts();
  }

  confirmSpikeAlerts(receipts: SpikeAlertReceipt[]): void {
    this.#change(() => this.#traffic.confirmSpikeAlerts(receipts));
  }

  requests(query: RequestLogQuery): RequestSample[] {
    return this.#traffic.requests(query, now());
  }

  /** Report files (read-only, paged): usage per day, product and sub-user. */
  reportTrafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number): TrafficDayRow[] {
    return this.#traffic.reportTrafficDays(scope, cursor, limit, now());
  }

  /** Report files (read-only, paged): the sampled request log of a range, oldest first. */
  reportRequestLog(
    scope: ReportScope,
    cursor: { ts: number; requestId: string } | null,
    limit: number,
  ): RequestSample[] {
    return this.#traffic.reportRequestLog(scope, cursor, limit, now());
  }

  /** Report files: requests, errors and last activity of ISP IPs. */
  reportIpHealth(ips: string[], from: number, to: number): IpHealth[] {
    return this.#traffic.reportIpHealth(ips, from, to, now());
  }

  listSessions(filters: SessionFilters): SessionSnapshot[] {
    return this.#traffic.listSessions(filters, now());
  }

  session(id: string): { session: SessionSnapshot; lastRequests: SessionRequest[] } | null {
    return this.#traffic.session(id, now());
  }

  /**
   * Folds and forgets; when usage stopped arriving with some of it not settled, a `settle` message asks the usage
   * consumer to hand it to D1 (if sending fails the alarm is retried; a message sent twice settles once).
   */
  override async alarm(): Promise<void> {
    this.#alarm.rang();
    const settleFor = this.#change(() => this.#traffic.maintain(now()));
    this.#wake();
    if (!settleFor) return;
    const { accountId, shard } = settleFor;
    const message: SettleMessage = shard === 0 ? { settle: accountId } : { settle: accountId, shard };
    await this.env.USAGE_QUEUE.send(JSON.stringify(message), { contentType: "text" });
  }

  /**
   * Runs a change in one storage transaction. When it throws (a row past SQLite's limit, say), its writes roll back
   * but the store's memory (the open row, the meter, caches) may already hold part of it: the object is reset, so
   * the next call starts from storage and a retry applies the change once.
   */
  #change<T>(change: () => T): T {
    try {
      return this.ctx.storage.transactionSync(change);
    } catch (error) {
      this.ctx.abort(`a change failed and was rolled back: ${error instanceof Error ? error.message : String(error)}`);
      throw error;
    }
  }

  /** Sets the alarm for the store's next wake (a storage write: no await needed). */
  #wake(): void {
    const at = this.#traffic.nextWake();
    if (at !== null) this.#alarm.wakeBy(at);
  }
}

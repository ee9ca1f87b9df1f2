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
import { storeName } from "./store-shards";
import type { TrafficStore } from "./traffic-store";

/**
 * The typed client of one account's `TrafficStore` (shard 0, the account's own, unless `shard` says; every reader
 * of an account that may be sharded goes through `AccountTrafficStores`). It owns the meter's first-use step: a
 * store that has not started metering is given the account's figures by `loadFigures` (read from D1) within the
 * retried call.
 */
export class TrafficStoreClient {
  readonly #stub: DurableObjectStub<TrafficStore>;
  readonly #loadFigures: () => Promise<MeterFigures>;

  readonly shard: number;

  constructor(
    env: Cloudflare.Env,
    accountId: string,
    { shard = 0, loadFigures }: { shard?: number; loadFigures?: () => Promise<MeterFigures> } = {},
  ) {
    const name = storeName(accountId, shard);
    this.shard = shard;
    this.#stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(name));
    this.#loadFigures =
      loadFigures ??
      (() => Promise.reject(new Error(`The traffic store ${name} is not metering and no figures were given.`)));
  }

  /** Applies usage parts (each once) and returns how many were new and the settlement due now, if any. */
  async ingest(input: StoreIngest): Promise<Extract<IngestOutcome, { outcome: "applied" }>> {
    const outcome = await this.#stub.ingest(input);
    if (outcome.outcome === "applied") return outcome;
    const applied = await this.#stub.ingest(input, await this.#loadFigures());
    if (applied.outcome !== "applied") throw new Error("The traffic store did not take its figures.");
    return applied;
  }

  settlement(): Promise<Settlement | null> {
    return this.#stub.settlement();
  }

  confirmSettlement(seq: number, figures: MeterFigures): Promise<Settlement | null> {
    return this.#stub.confirmSettlement(seq, figures);
  }

  learnFigures(figures: Partial<MeterFigures>): Promise<Settlement | null> {
    return this.#stub.learnFigures(figures);
  }

  periodUsage(subuserIds: string[]): Promise<Record<string, PeriodUsage>> {
    return this.#stub.periodUsage(subuserIds);
  }

  droppedUsage(): Promise<Array<{ day: number; records: number; bytes: number }>> {
    return this.#stub.droppedUsage();
  }

  async upsertSessions(snapshots: SessionSnapshot[]): Promise<void> {
    await this.#stub.upsertSessions(snapshots);
  }

  traffic(query: TrafficQuery): Promise<TrafficRow[]> {
    return this.#stub.traffic(query);
  }

  clientSources(
    subuserId: string,
    after: { firstSeen: number; block: string } | null,
    limit: number,
  ): Promise<SourceEntry[]> {
    return this.#stub.clientSources(subuserId, after, limit);
  }

  confirmSourceAlerts(alerts: SourceAlertReceipt[]): Promise<void> {
    return this.#stub.confirmSourceAlerts(alerts);
  }

  configureSpikes(subuserId: string, setting: SpikeSetting): Promise<void> {
    return this.#stub.configureSpikes(subuserId, setting);
  }

  /** A sub-user's episode acknowledged as normal teaches its baseline (`lesson`), or stops teaching it (null). */
  teachSpikes(subuserId: string, spikeId: string, lesson: Lesson | null): Promise<void> {
    return this.#stub.teachSpikes(subuserId, spikeId, lesson);
  }

  spikeAlerts(): Promise<SpikeAlert[]> {
    return this.#stub.spikeAlerts();
  }

  confirmSpikeAlerts(receipts: SpikeAlertReceipt[]): Promise<void> {
    return this.#stub.confirmSpikeAlerts(receipts);
  }

  requests(query: RequestLogQuery): Promise<RequestSample[]> {
    return this.#stub.requests(query);
  }

  reportTrafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number): Promise<TrafficDayRow[]> {
    return this.#stub.reportTrafficDays(scope, cursor, limit);
  }

  reportRequestLog(
    scope: ReportScope,
    cursor: { ts: number; requestId: string } | null,
    limit: number,
  ): Promise<RequestSample[]> {
    return this.#stub.reportRequestLog(scope, cursor, limit);
  }

  reportIpHealth(ips: string[], from: number, to: number): Promise<IpHealth[]> {
    return this.#stub.reportIpHealth(ips, from, to);
  }

  listSessions(filters: SessionFilters): Promise<SessionSnapshot[]> {
    return this.#stub.listSessions(filters);
  }

  session(id: string): Promise<{ session: SessionSnapshot; lastRequests: SessionRequest[] } | null> {
    return this.#stub.session(id);
  }
}

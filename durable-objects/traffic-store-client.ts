import type { SessionFilters } from "./session-index";
import type { IpHealth, ReportScope, TrafficDayCursor, TrafficDayRow } from "./traffic-reports";
import type { TrafficQuery, TrafficRow } from "./traffic-rollups";
import type { StoreIngest, TrafficStore } from "./traffic-store";
import type { RequestSample, SessionSnapshot, TrafficProduct } from "./traffic-types";

/** The typed client of one account's `TrafficStore`. */
export class TrafficStoreClient {
  readonly #stub: DurableObjectStub<TrafficStore>;

  constructor(env: Cloudflare.Env, accountId: string) {
    this.#stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(accountId));
  }

  ingest(message: StoreIngest): Promise<number> {
    return this.#stub.ingest(message);
  }

  async upsertSessions(snapshots: SessionSnapshot[]): Promise<void> {
    await this.#stub.upsertSessions(snapshots);
  }

  traffic(query: TrafficQuery): Promise<TrafficRow[]> {
    return this.#stub.traffic(query);
  }

  requests(query: { product: TrafficProduct; subuserId?: string; limit: number }): Promise<RequestSample[]> {
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

  session(id: string): Promise<SessionSnapshot | null> {
    return this.#stub.session(id);
  }
}

import type { SessionFilters } from "./session-index";
import type { TrafficQuery, TrafficRow } from "./traffic-rollups";
import type { StoreIngest, TrafficStore } from "./traffic-store";
import type { RequestSample, SessionSnapshot, TrafficProduct } from "./traffic-types";

/** The typed client of one account's `TrafficStore`. */
export class TrafficStoreClient {
  readonly #stub: DurableObjectStub<TrafficStore>;

  constructor(env: Cloudflare.Env, accountId: string) {
    this.#stub = env.TRAFFIC_STORE.get(env.TRAFFIC_STORE.idFromName(accountId));
  }

  ingest(message: StoreIngest): Promise<boolean> {
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

  listSessions(filters: SessionFilters): Promise<SessionSnapshot[]> {
    return this.#stub.listSessions(filters);
  }

  session(id: string): Promise<SessionSnapshot | null> {
    return this.#stub.session(id);
  }
}

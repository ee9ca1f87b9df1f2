import { CAP_KINDS } from "../../platform/cap-periods";
import { TrafficStoreClient } from "./client";
import type {
  IpHealth,
  MeterFigures,
  PeriodUsage,
  ReportScope,
  RequestLogQuery,
  RequestSample,
  SessionFilters,
  SessionRequest,
  SessionSnapshot,
  Settlement,
  SourceEntry,
  TrafficDayCursor,
  TrafficDayRow,
  TrafficQuery,
  TrafficRow,
} from "./contract";
import {
  mergeIpHealth,
  mergeNewestFirst,
  mergeOldestFirst,
  mergeSessionFinds,
  mergeSessionLists,
  mergeSources,
  mergeTrafficDays,
  mergeTrafficRows,
} from "./shard-merge";
import { historicShards, subuserShard } from "./store-shards";

/**
 * An account's traffic stores read as one: `shards` of them (`store-shards.ts`), each holding its sub-users'
 * usage. A question about one sub-user asks the shards it has had (its shard now and at each smaller count the
 * account had: usage routed before a re-shard stays where it landed); any other asks every shard and merges
 * (`shard-merge.ts`). With one shard every method makes exactly the one call `TrafficStoreClient` makes.
 */
export class AccountTrafficStores {
  readonly shards: number;
  readonly #stores: TrafficStoreClient[];

  constructor(env: Cloudflare.Env, accountId: string, shards: number, loadFigures?: () => Promise<MeterFigures>) {
    this.shards = shards;
    this.#stores = Array.from(
      { length: shards },
      (_, shard) => new TrafficStoreClient(env, accountId, { shard, loadFigures }),
    );
  }

  /** The store a sub-user's usage goes to now. */
  storeOf(subuserId: string): TrafficStoreClient {
    return this.#stores[subuserShard(subuserId, this.shards)] as TrafficStoreClient;
  }

  /** Every store told of new figures (each meters its own sub-users against them); the settlements they make due. */
  learnFigures(figures: Partial<MeterFigures>): Promise<Array<{ shard: number; settlement: Settlement | null }>> {
    return Promise.all(
      this.#stores.map(async (store) => ({ shard: store.shard, settlement: await store.learnFigures(figures) })),
    );
  }

  /** Sub-users' usage this month, today and in their lifetime: each summed over the shards it has had. */
  async periodUsage(subuserIds: string[]): Promise<Record<string, PeriodUsage>> {
    if (this.shards === 1) return this.#only().periodUsage(subuserIds);
    const asked = [...this.#subusersByShard(subuserIds)];
    const answers = await Promise.all(asked.map(([shard, ids]) => this.#store(shard).periodUsage(ids)));
    const usage: Record<string, PeriodUsage> = Object.fromEntries(
      subuserIds.map((id) => [id, { month: 0, day: 0, lifetime: 0 }]),
    );
    for (const answer of answers) {
      for (const [id, figures] of Object.entries(answer)) {
        const sum = usage[id];
        if (!sum) continue;
        for (const kind of CAP_KINDS) sum[kind] += figures[kind];
      }
    }
    return usage;
  }

  /** Sessions the API ended: to the store their sub-user's usage goes to now. */
  async upsertSessions(snapshots: SessionSnapshot[]): Promise<void> {
    const byStore = Map.groupBy(snapshots, (snapshot) => this.storeOf(snapshot.subuserId));
    await Promise.all([...byStore].map(([store, group]) => store.upsertSessions(group)));
  }

  traffic(query: TrafficQuery): Promise<TrafficRow[]> {
    return this.#merged(
      this.#storesFor(query.filters.subuserIds ?? null),
      (store) => store.traffic(query),
      (lists) => mergeTrafficRows(lists, query.groupBy),
    );
  }

  /**
   * A sub-user's client blocks: the shards it has had each list theirs; a block seen in two (across a re-shard) is
   * one entry, first seen at the earlier, last seen at the later, its requests and bytes summed.
   */
  clientSources(
    subuserId: string,
    after: { firstSeen: number; block: string } | null,
    limit: number,
  ): Promise<SourceEntry[]> {
    return this.#merged(
      this.#storesFor([subuserId]),
      (store) => store.clientSources(subuserId, after, limit),
      (lists) => mergeSources(lists, limit),
    );
  }

  requests(query: RequestLogQuery): Promise<RequestSample[]> {
    return this.#merged(
      this.#storesFor(query.subuserIds ?? null),
      (store) => store.requests(query),
      (lists) => mergeNewestFirst(lists, query.limit),
    );
  }

  reportTrafficDays(scope: ReportScope, cursor: TrafficDayCursor | null, limit: number): Promise<TrafficDayRow[]> {
    return this.#merged(
      this.#storesFor(scope.subuserIds),
      (store) => store.reportTrafficDays(scope, cursor, limit),
      (lists) => mergeTrafficDays(lists, limit),
    );
  }

  reportRequestLog(
    scope: ReportScope,
    cursor: { ts: number; requestId: string } | null,
    limit: number,
  ): Promise<RequestSample[]> {
    return this.#merged(
      this.#storesFor(scope.subuserIds),
      (store) => store.reportRequestLog(scope, cursor, limit),
      (lists) => mergeOldestFirst(lists, limit),
    );
  }

  reportIpHealth(ips: string[], from: number, to: number): Promise<IpHealth[]> {
    return this.#merged(this.#stores, (store) => store.reportIpHealth(ips, from, to), mergeIpHealth);
  }

  listSessions(filters: SessionFilters): Promise<SessionSnapshot[]> {
    return this.#merged(
      this.#storesFor(filters.subuserIds ?? null),
      (store) => store.listSessions(filters),
      (lists) => mergeSessionLists(lists, filters.limit),
    );
  }

  async session(id: string): Promise<{ session: SessionSnapshot; lastRequests: SessionRequest[] } | null> {
    if (this.shards === 1) return this.#only().session(id);
    const found = await Promise.all(this.#stores.map((store) => store.session(id)));
    return mergeSessionFinds(found.filter((entry) => entry !== null));
  }

  /** One store's answer as it is, or several merged. */
  async #merged<T>(
    stores: TrafficStoreClient[],
    ask: (store: TrafficStoreClient) => Promise<T>,
    merge: (answers: T[]) => T,
  ): Promise<T> {
    if (stores.length === 1) return ask(stores[0] as TrafficStoreClient);
    return merge(await Promise.all(stores.map(ask)));
  }

  /** The stores holding these sub-users' usage (null: every sub-user, so every store). */
  #storesFor(subuserIds: string[] | null): TrafficStoreClient[] {
    if (subuserIds === null || this.shards === 1) return this.#stores;
    // No sub-user at all: one store answers, with nothing (a merge of no answers would have no shape).
    if (subuserIds.length === 0) return this.#stores.slice(0, 1);
    return [...this.#subusersByShard(subuserIds).keys()].sort((a, b) => a - b).map((shard) => this.#store(shard));
  }

  /** Per shard, the sub-users that have had it. */
  #subusersByShard(subuserIds: string[]): Map<number, string[]> {
    const byShard = new Map<number, string[]>();
    for (const id of subuserIds) {
      for (const shard of historicShards(id, this.shards)) byShard.set(shard, [...(byShard.get(shard) ?? []), id]);
    }
    return byShard;
  }

  #store(shard: number): TrafficStoreClient {
    return this.#stores[shard] as TrafficStoreClient;
  }

  #only(): TrafficStoreClient {
    return this.#store(0);
  }
}

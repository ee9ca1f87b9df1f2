import { MINUTE } from "../../platform/clock";
import { products } from "../../vocabulary";
import { type ArrivalRows, LOGGED_SAMPLE, type LoggedSample, RECEIVED_SKEW_MS } from "./arrival-rows";
import {
  keptBelowRate,
  type RequestLogQuery,
  type RequestSample,
  requestSampleFields,
  requestSampleOf,
  type SampleCandidate,
  type TrafficProduct,
} from "./contract";
import { type FoldedTiers, floorTo, REQUEST_LOG_KEPT_MS, TIERS } from "./folded-tiers";

/** The sampled request log keeps, per product, the newest 1,000 requests of the last 48 hours (spec §8.5). */
export const REQUEST_LOG_SIZE = 1000;
/** A minute's count can still grow this long after it (its usage is still arriving): its entries are kept. */
const UNSETTLED_MS = 10 * MINUTE;

/**
 * The sampled request log of one account (not for billing). Each candidate the producer sent stands for `weight`
 * of the account's requests in its minute of the batch; it is kept with probability min(1, 100 / requests-per-minute
 * × weight), decided by a hash of its request id (`keptBelow`: the rate under which it stays), so a redelivered
 * part decides the same way and a minute whose count grows later drops what it would no longer keep. Candidates
 * are stored with the rows they arrived in (and with their folded 5-minute bucket for the 48 hours); the log itself
 * — the newest 1,000 per product that their minutes' counts keep — is read from them into memory when first asked.
 */
export class RequestLog {
  readonly #arrivals: ArrivalRows;
  readonly #tiers: FoldedTiers;
  readonly #requestsIn: (minute: number) => number;
  /** Per product, the entries that can still be among the newest 1,000 (null until first read). */
  #entries: Map<TrafficProduct, Map<string, LoggedSample>> | null = null;

  constructor(arrivals: ArrivalRows, tiers: FoldedTiers, requestsIn: (minute: number) => number) {
    this.#arrivals = arrivals;
    this.#tiers = tiers;
    this.#requestsIn = requestsIn;
  }

  /**
   * The candidates of an ingest that its minutes' counts keep (as stored: with the rate they stay below);
   * `requestsIn` counts the ingest's own requests too.
   */
  keep(candidates: SampleCandidate[], at: number, requestsIn: (minute: number) => number): LoggedSample[] {
    const kept: LoggedSample[] = [];
    for (const sample of candidates) {
      if (sample.ts <= at - REQUEST_LOG_KEPT_MS) continue;
      const keptBelow = keptBelowRate(sample);
      if (!(Math.max(1, requestsIn(floorTo(sample.ts, MINUTE))) < keptBelow)) continue;
      kept.push([
        ...requestSampleFields(sample),
        // JSON has no Infinity: null, never thinned (a hash of exactly 0).
        Number.isFinite(keptBelow) ? keptBelow : null,
      ]);
    }
    return kept;
  }

  /** Entries an ingest kept join the log (when it has been read into memory). */
  add(samples: LoggedSample[], at: number): void {
    if (!this.#entries) return;
    for (const sample of samples) this.#put(sample);
    this.#trim(at);
  }

  /** Whether a minute's count keeps an entry. */
  keeps(sample: LoggedSample, requests = this.#requestsIn(floorTo(sample[LOGGED_SAMPLE.ts], MINUTE))): boolean {
    const keptBelow = sample[LOGGED_SAMPLE.keptBelow];
    return keptBelow === null || Math.max(1, requests) < keptBelow;
  }

  /** Newest first. */
  list(query: RequestLogQuery, at: number): RequestSample[] {
    const subusers = query.subuserIds && new Set(query.subuserIds);
    return this.#visible(query.product, at)
      .filter((sample) => !subusers || subusers.has(sample[LOGGED_SAMPLE.subuserId]))
      .slice(0, query.limit)
      .map(requestSampleOf);
  }

  /**
   * The log in `[from, to)`, oldest first, up to `limit` entries after `cursor`; `products` and `subuserIds` narrow
   * it (null: all). Report files read it a page at a time.
   */
  range(
    scope: { from: number; to: number; products: string[] | null; subuserIds: string[] | null },
    cursor: { ts: number; requestId: string } | null,
    limit: number,
    at: number,
  ): RequestSample[] {
    const wanted = products.filter((product) => scope.products === null || scope.products.includes(product));
    const subusers = scope.subuserIds === null ? null : new Set(scope.subuserIds);
    return wanted
      .flatMap((product) => this.#visible(product, at))
      .filter((s) => {
        const ts = s[LOGGED_SAMPLE.ts];
        return (
          ts >= scope.from &&
          ts < scope.to &&
          (subusers === null || subusers.has(s[LOGGED_SAMPLE.subuserId])) &&
          (cursor === null || ts > cursor.ts || (ts === cursor.ts && s[LOGGED_SAMPLE.requestId] > cursor.requestId))
        );
      })
      .sort(oldestFirst)
      .slice(0, limit)
      .map(requestSampleOf);
  }

  /** A product's log as it stands: the newest 1,000 kept entries of the last 48 hours, newest first. */
  #visible(product: TrafficProduct, at: number): LoggedSample[] {
    this.#load(at);
    return [...this.#productEntries(product).values()]
      .filter((sample) => sample[LOGGED_SAMPLE.ts] > at - REQUEST_LOG_KEPT_MS && this.keeps(sample))
      .sort(newestFirst)
      .slice(0, REQUEST_LOG_SIZE);
  }

  /**
   * Reads the log from the rows, newest first, until each product has 1,000 entries newer than anything the rows
   * left could hold (a row holds nothing newer than its arrival, a folded bucket nothing past its end).
   */
  #load(at: number): void {
    if (this.#entries) return;
    this.#entries = new Map();
    const open = new Set<TrafficProduct>(products);
    const settle = (newestPossible: number) => {
      for (const product of [...open]) {
        const entries = [...this.#productEntries(product).values()].filter((s) => this.keeps(s)).sort(newestFirst);
        const last = entries[REQUEST_LOG_SIZE - 1];
        if (last && last[LOGGED_SAMPLE.ts] > newestPossible) open.delete(product);
      }
    };
    const arrivals = this.#arrivals.heads().sort((a, b) => b.minute - a.minute);
    let oldestArrival = Number.POSITIVE_INFINITY;
    for (const head of arrivals) {
      if (open.size === 0) break;
      settle(head.minute + MINUTE + RECEIVED_SKEW_MS);
      for (const sample of this.#arrivals.column(head.slot, "samples")) {
        if (open.has(sample[LOGGED_SAMPLE.product])) this.#put(sample);
      }
      oldestArrival = Math.min(oldestArrival, head.minute);
    }
    // Beyond the arrival rows' 25 hours: the candidates folded with their 5-minute buckets.
    const five = TIERS["5m"].span;
    const buckets = this.#tiers
      .buckets("5m")
      .filter((bucket) => bucket + five > at - REQUEST_LOG_KEPT_MS && bucket < oldestArrival)
      .reverse();
    for (const bucket of buckets) {
      if (open.size === 0) break;
      settle(bucket + five);
      for (const sample of this.#tiers.samples(bucket)) {
        if (open.has(sample[LOGGED_SAMPLE.product])) this.#put(sample);
      }
    }
    this.#trim(at);
  }

  /** Forgets entries that can no longer be among the newest 1,000: past 48 hours, or behind 1,000 settled ones. */
  #trim(at: number): void {
    for (const entries of this.#entries?.values() ?? []) {
      const kept = [...entries.values()]
        .filter((s) => s[LOGGED_SAMPLE.ts] > at - REQUEST_LOG_KEPT_MS)
        .sort(newestFirst);
      let settled = 0;
      entries.clear();
      for (const sample of kept) {
        if (settled >= REQUEST_LOG_SIZE) break;
        entries.set(sample[LOGGED_SAMPLE.requestId], sample);
        if (sample[LOGGED_SAMPLE.ts] < at - UNSETTLED_MS && this.keeps(sample)) settled++;
      }
    }
  }

  /** An entry into its product's log (a copy of one there replaces it). */
  #put(sample: LoggedSample): void {
    this.#productEntries(sample[LOGGED_SAMPLE.product]).set(sample[LOGGED_SAMPLE.requestId], sample);
  }

  #productEntries(product: TrafficProduct): Map<string, LoggedSample> {
    const entries = this.#entries as Map<TrafficProduct, Map<string, LoggedSample>>;
    let map = entries.get(product);
    if (!map) {
      map = new Map();
      entries.set(product, map);
    }
    return map;
  }
}

/** Newest first: by time, then request id (descending, in code units). */
function newestFirst(a: LoggedSample, b: LoggedSample): number {
  const { ts, requestId } = LOGGED_SAMPLE;
  return b[ts] - a[ts] || (a[requestId] < b[requestId] ? 1 : a[requestId] > b[requestId] ? -1 : 0);
}

/** Oldest first: by time, then request id (ascending, in code units). */
function oldestFirst(a: LoggedSample, b: LoggedSample): number {
  const { ts, requestId } = LOGGED_SAMPLE;
  return a[ts] - b[ts] || (a[requestId] < b[requestId] ? -1 : a[requestId] > b[requestId] ? 1 : 0);
}

import { LAST_REQUESTS } from "../subuser-gate/contract";
import type { RequestSample, SessionRequest, SessionSnapshot, SourceEntry, TrafficDayRow } from "./contract";
import { DOMAIN_ROWS, type IpHealth, type Metrics, OTHER_DOMAIN, type TrafficRow } from "./contract";

/**
 * How a sharded account's answers are put together from its stores' (`AccountTrafficStores`). Every figure of
 * `Metrics` is a sum, so rows of one key add; lists ordered by a key are merged in that order and cut at the limit
 * again, which is exact: an item within the merged first `limit` is within its own store's first `limit`.
 */

/** Adds `row`'s metrics into `into`. */
function addMetrics(into: Metrics, row: Metrics): void {
  into.bytesIn += row.bytesIn;
  into.bytesOut += row.bytesOut;
  into.requests += row.requests;
  into.errors += row.errors;
}

/** Items of several lists, one per key (`combine` folds a later one into the first), sorted, the first `limit`. */
function mergeSorted<T>(
  lists: T[][],
  keyOf: (item: T) => string,
  compare: (a: T, b: T) => number,
  combine: (into: T, item: T) => void,
  limit = Number.POSITIVE_INFINITY,
): T[] {
  const byKey = new Map<string, T>();
  for (const item of lists.flat()) {
    const key = keyOf(item);
    const known = byKey.get(key);
    if (known) combine(known, item);
    else byKey.set(key, structuredClone(item));
  }
  return [...byKey.values()].sort(compare).slice(0, limit);
}

const codeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Traffic rows: summed per key, in the store's order (by key; domains heaviest first, bounded again to the
 * heaviest `DOMAIN_ROWS` and `(other)`: a domain one store counted in its `(other)` stays there).
 */
export function mergeTrafficRows(lists: TrafficRow[][], groupBy: string | null): TrafficRow[] {
  const combine = (into: TrafficRow, row: TrafficRow) => {
    addMetrics(into, row);
    if (row.carrierName != null) into.carrierName ??= row.carrierName;
  };
  const keyOf = (row: TrafficRow) => String(row.key);
  if (groupBy !== "domain") {
    return mergeSorted(
      lists,
      keyOf,
      (a, b) => {
        const x = a.key ?? "";
        const y = b.key ?? "";
        return typeof x === "number" && typeof y === "number" ? x - y : codeUnits(String(x), String(y));
      },
      combine,
    );
  }
  const rows = mergeSorted(lists, keyOf, heavier, combine);
  const named = rows.filter((row) => row.key !== OTHER_DOMAIN);
  const other: TrafficRow = { key: OTHER_DOMAIN, bytesIn: 0, bytesOut: 0, requests: 0, errors: 0 };
  for (const row of [...named.slice(DOMAIN_ROWS), ...rows.filter((row) => row.key === OTHER_DOMAIN)]) {
    addMetrics(other, row);
  }
  return [...named.slice(0, DOMAIN_ROWS), ...(other.requests + other.bytesIn + other.bytesOut > 0 ? [other] : [])];
}

/** Heaviest first (bytes in + out, then requests), then by key: the store's order of domains. */
function heavier(a: TrafficRow, b: TrafficRow): number {
  const bytes = b.bytesIn + b.bytesOut - (a.bytesIn + a.bytesOut);
  return bytes || b.requests - a.requests || codeUnits(String(a.key), String(b.key));
}

/** Report rows per day, product and sub-user (or domain): summed per key, in key order, the first `limit`. */
export function mergeTrafficDays(lists: TrafficDayRow[][], limit: number): TrafficDayRow[] {
  return mergeSorted(
    lists,
    (row) => JSON.stringify([row.day, row.product, row.subuserId, row.domain ?? ""]),
    (a, b) =>
      a.day - b.day || codeUnits(a.product, b.product) || codeUnits(a.domain ?? a.subuserId, b.domain ?? b.subuserId),
    addMetrics,
    limit,
  );
}

/** Request samples, newest first (by time, then request id descending), the first `limit`. */
export function mergeNewestFirst(lists: RequestSample[][], limit: number): RequestSample[] {
  return mergeSorted(
    lists,
    (s) => s.requestId,
    (a, b) => b.ts - a.ts || codeUnits(b.requestId, a.requestId),
    () => {},
    limit,
  );
}

/** Request samples, oldest first (by time, then request id), the first `limit`. */
export function mergeOldestFirst(lists: RequestSample[][], limit: number): RequestSample[] {
  return mergeSorted(
    lists,
    (s) => s.requestId,
    (a, b) => a.ts - b.ts || codeUnits(a.requestId, b.requestId),
    () => {},
    limit,
  );
}

/** ISP IPs' health: requests and errors summed, the latest minute seen. */
export function mergeIpHealth(lists: IpHealth[][]): IpHealth[] {
  const [first = [], ...rest] = lists;
  return first.map((health, index) => {
    const merged = { ...health };
    for (const list of rest) {
      const other = list[index] as IpHealth;
      merged.requests += other.requests;
      merged.errors += other.errors;
      if (other.lastSeenAt !== null) merged.lastSeenAt = Math.max(merged.lastSeenAt ?? 0, other.lastSeenAt);
    }
    return merged;
  });
}

type FoundSession = { session: SessionSnapshot; lastRequests: SessionRequest[] };

/**
 * One session as several stores know it: the gate of a session it named announces it to its sub-user's store, and
 * a session's usage goes to its sub-user's shard (split between two during a re-shard; a node-decided session is
 * named by each store from its key, generation and first request, so the two copies share an id when their first
 * requests do, else they are two sessions for that minute). Usage adds up; the exit and repin are those of the store
 * that saw its latest requests; the earliest start is the start; ended in any store is ended.
 */
export function mergeSessionFinds(found: FoundSession[]): FoundSession | null {
  const lastTs = (entry: FoundSession) => entry.lastRequests[0]?.ts ?? Number.NEGATIVE_INFINITY;
  const [latest, ...rest] = [...found].sort((a, b) => lastTs(b) - lastTs(a) || b.session.requests - a.session.requests);
  if (!latest) return null;
  const session = { ...latest.session };
  for (const { session: other } of rest) {
    session.bytesUsed += other.bytesUsed;
    session.requests += other.requests;
    session.version += other.version;
    session.exitIp ??= other.exitIp;
    if (other.startedAt < session.startedAt) {
      session.startedAt = other.startedAt;
      session.expiresAt = other.expiresAt;
    }
    if (other.status === "terminated") {
      session.status = "terminated";
      session.terminatedAt = Math.max(session.terminatedAt ?? 0, other.terminatedAt ?? 0);
    }
  }
  const lastRequests = found
    .flatMap((entry) => entry.lastRequests)
    .sort((a, b) => b.ts - a.ts || codeUnits(b.requestId, a.requestId))
    .slice(0, LAST_REQUESTS);
  return { session, lastRequests };
}

/** Session listings (by id, newest first): one entry per session across the stores, the first `limit`. */
export function mergeSessionLists(lists: SessionSnapshot[][], limit: number): SessionSnapshot[] {
  const byId = Map.groupBy(lists.flat(), (session) => session.id);
  return [...byId.values()]
    .map(
      (copies) =>
        mergeSessionFinds(copies.map((session) => ({ session, lastRequests: [] })))?.session as SessionSnapshot,
    )
    .sort((a, b) => codeUnits(b.id, a.id))
    .slice(0, limit);
}

/** A sub-user's sources from its shards, by block: newest first seen first, as one store lists them. */
export function mergeSources(lists: SourceEntry[][], limit: number): SourceEntry[] {
  const byBlock = new Map<string, SourceEntry>();
  for (const entry of lists.flat()) {
    const known = byBlock.get(entry.block);
    if (!known) {
      byBlock.set(entry.block, { ...entry });
      continue;
    }
    known.firstSeen = Math.min(known.firstSeen, entry.firstSeen);
    known.lastSeen = Math.max(known.lastSeen, entry.lastSeen);
    known.requests += entry.requests;
    known.bytes += entry.bytes;
  }
  return [...byBlock.values()]
    .sort((a, b) => b.firstSeen - a.firstSeen || (a.block < b.block ? 1 : a.block > b.block ? -1 : 0))
    .slice(0, limit);
}

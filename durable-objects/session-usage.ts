import type { SessionRequest, SessionUsage } from "./traffic-types";

/** A session keeps its latest requests (spec §3.3). */
export const LAST_REQUESTS = 10;

/**
 * Adds `usage` to `total`, the same session's usage so far (in place): sums, the exit IP of the earliest record
 * (it pins a session that has none), the latest repin, and the newest 10 requests. The producer sums a batch's
 * records with it, the gate a consumer batch's messages, so both read usage the same way.
 */
export function addSessionUsage(total: SessionUsage, usage: SessionUsage): void {
  if (usage.firstTs < total.firstTs) {
    total.firstTs = usage.firstTs;
    total.firstExitIp = usage.firstExitIp;
  }
  if (usage.repinnedExitIp !== null && (total.repinnedExitIp === null || usage.lastTs >= total.lastTs)) {
    total.repinnedExitIp = usage.repinnedExitIp;
  }
  total.lastTs = Math.max(total.lastTs, usage.lastTs);
  total.bytes += usage.bytes;
  total.requests += usage.requests;
  for (const request of usage.lastRequests) keepLatest(total.lastRequests, request);
}

/** A copy that `addSessionUsage` may change without touching the original. */
export function copySessionUsage(usage: SessionUsage): SessionUsage {
  return { ...usage, lastRequests: [...usage.lastRequests] };
}

/** Inserts `request` into `latest` (newest first, at most 10), unless it is older than all 10 kept. */
function keepLatest(latest: SessionRequest[], request: SessionRequest): void {
  let at = latest.length;
  while (at > 0 && isNewer(request, latest[at - 1] as SessionRequest)) at--;
  if (at >= LAST_REQUESTS) return;
  latest.splice(at, 0, request);
  if (latest.length > LAST_REQUESTS) latest.pop();
}

/** Newest first by time, then by request id in binary order (as SQLite's `ORDER BY ts DESC, request_id DESC`). */
function isNewer(a: SessionRequest, b: SessionRequest): boolean {
  return a.ts > b.ts || (a.ts === b.ts && a.requestId > b.requestId);
}

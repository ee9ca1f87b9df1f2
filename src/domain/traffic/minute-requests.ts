import { and, eq, lt, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { subusers, usageMinuteRequests } from "../../db/schema";
import { HOUR, MINUTE } from "../../platform/clock";
import type { Cell } from "./usage-messages";

/**
 * Accounts' requests per minute in D1 (`usage_minute_requests`): the usage consumer adds each message's once, in
 * the batch that applies it, after the account's traffic store counted it; so a figure read here is never above
 * the store's. The usage route samples request-log candidates at that figure: the store, sampling at its own
 * (higher or equal) rate, keeps a subset of what the route sends (durable-objects/request-log.ts, `keepsSample`).
 */

/** Minutes are kept an hour: less than the store keeps its own counts (2 hours), so D1 never knows one it forgot. */
const KEPT_MS = HOUR;

/** Statements that add cells' requests to their minutes, and forget minutes past the hour. */
export function addMinuteRequestsStatements(db: Database, accountId: string, cells: Cell[], at: number) {
  const perMinute = new Map<number, number>();
  for (const cell of cells) perMinute.set(cell.minute, (perMinute.get(cell.minute) ?? 0) + cell.requests);
  const recent = [...perMinute].filter(([minute]) => minute >= at - KEPT_MS);
  const forget = db
    .delete(usageMinuteRequests)
    .where(and(eq(usageMinuteRequests.accountId, accountId), lt(usageMinuteRequests.minute, at - KEPT_MS)));
  if (recent.length === 0) return [forget];
  const add = db
    .insert(usageMinuteRequests)
    .select(sql`SELECT ${accountId}, value->>0, value->>1 FROM json_each(${JSON.stringify(recent)}) WHERE true`)
    .onConflictDoUpdate({
      target: [usageMinuteRequests.accountId, usageMinuteRequests.minute],
      set: { requests: sql`${usageMinuteRequests.requests} + excluded.requests` },
    });
  return [add, forget];
}

/**
 * The requests per minute, around the given times, of the accounts owning the named sub-users (one query, in the
 * usage route's first D1 round trip).
 */
export function minuteRequestsQuery(db: Database, subuserNames: string[], times: number[]) {
  const minutes = new Set<number>();
  for (const ts of times) {
    const minute = ts - (ts % MINUTE);
    minutes.add(minute).add(minute - MINUTE);
  }
  return db
    .select()
    .from(usageMinuteRequests)
    .where(
      sql`${usageMinuteRequests.accountId} IN (SELECT ${subusers.accountId} FROM ${subusers}
            WHERE ${subusers.name} IN (SELECT value FROM json_each(${JSON.stringify(subuserNames)})))
          AND ${usageMinuteRequests.minute} IN (SELECT value FROM json_each(${JSON.stringify([...minutes])}))`,
    );
}

/** Rows of `minuteRequestsQuery` as a lookup per account: requests in a minute (0 when unknown). */
export function minuteRequestsByAccount(
  rows: Array<{ accountId: string; minute: number; requests: number }>,
): (accountId: string) => (minute: number) => number {
  const byAccount = new Map<string, Map<number, number>>();
  for (const row of rows) {
    const minutes = byAccount.get(row.accountId) ?? new Map<number, number>();
    minutes.set(row.minute, row.requests);
    byAccount.set(row.accountId, minutes);
  }
  return (accountId) => {
    const minutes = byAccount.get(accountId);
    return (minute) => minutes?.get(minute) ?? 0;
  };
}

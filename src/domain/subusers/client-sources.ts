import { and, eq, inArray, isNull } from "drizzle-orm";
import { subusers } from "../../db/schema";
import type { TrafficStoreClient } from "../../durable-objects/traffic-store";
import {
  NEW_SOURCE_ALERT_WINDOW_MS,
  type SourceAlert,
  type SourceEntry,
} from "../../durable-objects/traffic-store/contract";
import { MINUTE } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { cursorAfter, type PageQuery } from "../../platform/pagination";
import type { DomainContext, Principal } from "../context";
import { eventStatement, eventTypes } from "../events";
import { accountStores } from "../traffic/store";
import { runUnitOfWork } from "../unit-of-work";
import { findSubuser } from "./subusers";

/**
 * A page of the client blocks a sub-user of the caller's account sent traffic from in the last 30 days, newest
 * first seen first (`limit + 1` rows: `toPage` sees whether more follow). Another account's sub-user is 404 like a
 * missing one. Each row's `id` is its keyset position (first seen, block); a late record from an earlier time can
 * move a block's first seen back while pages are read, so such a block may show on two pages (never on none).
 */
export async function listClientSources(
  ctx: DomainContext,
  principal: Principal,
  subuserId: string,
  page: PageQuery,
): Promise<Array<SourceEntry & { id: string }>> {
  const subuser = await findSubuser(ctx, principal, subuserId);
  const cursor = cursorAfter(page.cursor);
  const entries = await (await accountStores(ctx, principal.accountId)).clientSources(
    subuser.id,
    cursor === null ? null : sourcePosition(cursor),
    page.limit + 1,
  );
  return entries.map((entry) => ({ id: `${entry.firstSeen}~${entry.block}`, ...entry }));
}

function sourcePosition(cursor: string): { firstSeen: number; block: string } {
  const [firstSeen, block] = cursor.split("~");
  if (!firstSeen || !/^\d{1,15}$/.test(firstSeen) || !block) {
    throw new ApiError("invalid_request", "cursor: not a cursor returned by this API.", {
      details: [{ field: "cursor", message: "Not a cursor returned by this API." }],
    });
  }
  return { firstSeen: Number(firstSeen), block };
}

/**
 * Records `subuser.new_source` for the alerts of the account's store whose sub-user opted in (live, with
 * `alert_on_new_source`), once per alert (its sub-user and time are the dedupe key), then confirms them all to the
 * store: an alert of a sub-user that did not opt in is dropped (and starts no rate-limit window there); one that
 * fails to record stays in the store's outbox and comes back with the next ingest.
 */
export async function announceNewSources(
  ctx: DomainContext,
  accountId: string,
  alerts: SourceAlert[],
  store: TrafficStoreClient,
): Promise<void> {
  if (alerts.length === 0) return;
  const optedIn = await ctx.db
    .select({ id: subusers.id })
    .from(subusers)
    .where(
      and(
        eq(subusers.accountId, accountId),
        inArray(
          subusers.id,
          alerts.map((alert) => alert.subuserId),
        ),
        eq(subusers.alertOnNewSource, true),
        isNull(subusers.deletedAt),
      ),
    );
  const wanted = new Set(optedIn.map((row) => row.id));
  const statements = alerts
    .filter((alert) => wanted.has(alert.subuserId))
    .map((alert) =>
      eventStatement(ctx, {
        accountId,
        type: eventTypes.subuserNewSource,
        payload: {
          subuser: alert.subuserId,
          new_blocks: alert.newBlocks,
          blocks: alert.blocks,
          window_minutes: NEW_SOURCE_ALERT_WINDOW_MS / MINUTE,
        },
        dedupeKey: `${eventTypes.subuserNewSource}:${alert.subuserId}:${alert.at}`,
        at: alert.at,
      }),
    );
  if (statements.length > 0) await runUnitOfWork(ctx, statements);
  await store.confirmSourceAlerts(
    alerts.map(({ subuserId, at }) => ({ subuserId, at, recorded: wanted.has(subuserId) })),
  );
}

import { and, eq, gte } from "drizzle-orm";
import { events } from "../../db/schema";
import { DAY, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { firstIdAt, isId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import type { DomainContext, Principal } from "../context";
import { assertAccountWideKey } from "./endpoints";

/** `GET /events` shows this much history. */
export const EVENT_WINDOW_MS = 30 * DAY;

export interface EventFilters extends PageQuery {
  type?: string;
}

/** The last 30 days: the id range (ids sort by creation time) bounds the index scan, `created_at` decides. */
function inWindow() {
  const cutoff = now() - EVENT_WINDOW_MS;
  return [gte(events.id, firstIdAt("event", cutoff)), gte(events.createdAt, cutoff)];
}

/** The account's events of the last 30 days, newest first (every plan: reading them costs nothing to deliver). */
export async function listEvents(ctx: DomainContext, principal: Principal, filters: EventFilters) {
  assertAccountWideKey(principal);
  const page = keysetPage(events.id, filters);
  return ctx.db
    .select()
    .from(events)
    .where(
      and(
        eq(events.accountId, principal.accountId),
        ...inWindow(),
        page.where,
        filters.type ? eq(events.type, filters.type) : undefined,
      ),
    )
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/** One event of the account from the last 30 days; older, unknown and other accounts' ids are all 404. */
export async function findEvent(ctx: DomainContext, principal: Principal, id: string) {
  assertAccountWideKey(principal);
  const event = isId("event", id)
    ? await ctx.db
        .select()
        .from(events)
        .where(
          and(
            eq(events.id, id),
            eq(events.accountId, principal.accountId),
            gte(events.createdAt, now() - EVENT_WINDOW_MS),
          ),
        )
        .get()
    : undefined;
  if (!event) throw new ApiError("event_not_found");
  return event;
}

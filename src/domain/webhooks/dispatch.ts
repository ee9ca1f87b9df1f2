import { and, asc, eq, inArray, isNull, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { events, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { MINUTE } from "../../platform/clock";
import { newId } from "../../platform/ids";
import type { DomainContext } from "../context";

/** One queue message: a delivery whose automatic attempt is due. */
export interface WebhookMessage {
  deliveryId: string;
  endpointId: string;
}

/** Events fanned out per round; the cron runs rounds until the outbox is empty or this many rounds ran. */
const FAN_OUT_CHUNK = 50;
const MAX_ROUNDS = 20;
/** A handed-over delivery is not handed over again for this long (unless its attempt is recorded before). */
export const QUEUE_LEASE_MS = 5 * MINUTE;
const ENQUEUE_CHUNK = 500;
const SEND_BATCH = 100;

/**
 * The outbox → deliveries step: every event not yet dispatched gets one `pending` delivery, due at once, per
 * enabled endpoint of its account subscribed to its type (unique per event and endpoint, so two dispatchers
 * racing create each delivery once); then the event is marked dispatched (`delivered_at`), in the same batch.
 */
export async function fanOutEvents(ctx: DomainContext, at: number, accountId?: string): Promise<number> {
  const outbox = await ctx.db
    .select({ id: events.id, accountId: events.accountId, type: events.type })
    .from(events)
    .where(and(isNull(events.deliveredAt), accountId ? eq(events.accountId, accountId) : undefined))
    .orderBy(asc(events.id))
    .limit(FAN_OUT_CHUNK);
  if (outbox.length === 0) return 0;
  const accountIds = [...new Set(outbox.map((event) => event.accountId))];
  const endpoints = await ctx.db
    .select({ id: webhookEndpoints.id, accountId: webhookEndpoints.accountId, events: webhookEndpoints.events })
    .from(webhookEndpoints)
    .where(
      and(
        sql`${webhookEndpoints.accountId} IN (SELECT value FROM json_each(${JSON.stringify(accountIds)}))`,
        eq(webhookEndpoints.status, "enabled"),
      ),
    );
  const deliveries = outbox.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpoint.accountId === event.accountId && subscribes(endpoint.events, event.type))
      .map((endpoint) => ({
        id: newId("webhookDelivery", at),
        accountId: event.accountId,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
      })),
  );
  const eventIds = JSON.stringify(outbox.map((event) => event.id));
  const markDispatched = ctx.db
    .update(events)
    .set({ deliveredAt: at })
    .where(and(sql`${events.id} IN (SELECT value FROM json_each(${eventIds}))`, isNull(events.deliveredAt)));
  // One bound parameter for all rows (D1 allows 100 per statement): the rows travel as one JSON array.
  const insertDeliveries = ctx.db.insert(webhookDeliveries).select(
    sql`SELECT d.value->>'id', d.value->>'accountId', d.value->>'endpointId', d.value->>'eventId',
          d.value->>'eventType', 'pending', 0, 0, NULL, ${at}, NULL, NULL, '[]', ${at}, ${at}
        FROM json_each(${JSON.stringify(deliveries)}) d WHERE true
        ON CONFLICT (event_id, endpoint_id) DO NOTHING`,
  );
  await ctx.db.batch([insertDeliveries, markDispatched]);
  return outbox.length;
}

export function subscribes(subscribed: string[], type: string): boolean {
  return subscribed.includes("*") || subscribed.includes(type);
}

/**
 * Hands every due delivery (pending, due, neither queued nor being attempted) to the `webhooks` queue, in event
 * order. `queued_until` is set first: a send that fails leaves them to the run after the lease, so none is lost,
 * and none is handed over twice while it waits in the queue.
 */
export async function enqueueDueDeliveries(ctx: DomainContext, at: number, accountId?: string): Promise<number> {
  const free = (column: SQLiteColumn) => sql`(${column} IS NULL OR ${column} <= ${at})`;
  const due = ctx.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        sql`${webhookDeliveries.nextAttemptAt} <= ${at}`,
        free(webhookDeliveries.queuedUntil),
        free(webhookDeliveries.claimedUntil),
        accountId ? eq(webhookDeliveries.accountId, accountId) : undefined,
      ) as SQL,
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(ENQUEUE_CHUNK);
  const handed = await ctx.db
    .update(webhookDeliveries)
    .set({ queuedUntil: at + QUEUE_LEASE_MS })
    .where(inArray(webhookDeliveries.id, due))
    .returning({
      deliveryId: webhookDeliveries.id,
      endpointId: webhookDeliveries.endpointId,
      eventId: webhookDeliveries.eventId,
    });
  handed.sort((a, b) => (a.eventId < b.eventId ? -1 : 1));
  for (let start = 0; start < handed.length; start += SEND_BATCH) {
    const chunk = handed.slice(start, start + SEND_BATCH);
    await ctx.env.WEBHOOK_QUEUE.sendBatch(
      chunk.map(({ deliveryId, endpointId }) => ({ body: { deliveryId, endpointId } satisfies WebhookMessage })),
    );
  }
  return handed.length;
}

/** Fans out the outbox and hands due deliveries to the queue: the cron's step, and the prompt path after writes. */
export async function dispatchWebhooks(ctx: DomainContext, at: number, accountId?: string): Promise<number> {
  let fannedOut = 0;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const count = await fanOutEvents(ctx, at, accountId);
    fannedOut += count;
    if (count < FAN_OUT_CHUNK) break;
  }
  return fannedOut + (await enqueueDueDeliveries(ctx, at, accountId));
}

import { and, eq } from "drizzle-orm";
import { events, type WebhookDeliveryRow, webhookDeliveries } from "../../db/schema";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { eventTypes } from "../events";
import { commit } from "../unit-of-work";
import { attempt, CLAIM_MS, claimForManualAttempt } from "./attempts";
import { findEndpoint } from "./endpoints";

export interface DeliveryFilters extends PageQuery {
  status?: WebhookDeliveryRow["status"];
}

/** The endpoint's delivery log, newest first. */
export async function listDeliveries(
  ctx: DomainContext,
  principal: Principal,
  endpointId: string,
  filters: DeliveryFilters,
) {
  const endpoint = await findEndpoint(ctx, principal, endpointId);
  const page = keysetPage(webhookDeliveries.id, filters);
  return ctx.db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpoint.id),
        eq(webhookDeliveries.accountId, principal.accountId),
        page.where,
        filters.status ? eq(webhookDeliveries.status, filters.status) : undefined,
      ),
    )
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * Sends a delivery again now, whatever its state (an enabled or disabled endpoint alike: the owner asked), and
 * returns it with the new attempt. A 2xx ends any pending schedule; a failure leaves the schedule as it was.
 */
export async function retryDelivery(
  ctx: DomainContext,
  principal: Principal,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDeliveryRow> {
  const endpoint = await findEndpoint(ctx, principal, endpointId);
  const claimed = isId("webhookDelivery", deliveryId)
    ? await claimForManualAttempt(ctx, endpoint, deliveryId, now())
    : undefined;
  if (claimed) return attempt(ctx, claimed, endpoint, "manual");
  const exists = isId("webhookDelivery", deliveryId)
    ? await ctx.db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, endpoint.id)))
        .get()
    : undefined;
  throw new ApiError(exists ? "delivery_in_progress" : "webhook_delivery_not_found");
}

/**
 * Records a `webhook.test` event for this endpoint alone (already dispatched, so no other endpoint gets it),
 * sends it now — enabled or disabled, to check a receiver before enabling it — and returns the delivery with
 * its one attempt. A test is not retried automatically; a 410 disables the endpoint like any delivery.
 */
export async function sendTestEvent(
  ctx: DomainContext,
  principal: Principal,
  endpointId: string,
): Promise<WebhookDeliveryRow> {
  const endpoint = await findEndpoint(ctx, principal, endpointId);
  const at = now();
  const eventId = newId("event", at);
  const delivery = {
    id: newId("webhookDelivery", at),
    accountId: principal.accountId,
    endpointId: endpoint.id,
    eventId,
    eventType: eventTypes.webhookTest,
    status: "pending" as const,
    attemptCount: 0,
    automaticAttempts: 0,
    firstAttemptAt: null,
    nextAttemptAt: null,
    queuedUntil: null,
    claimedUntil: at + CLAIM_MS,
    attempts: [],
    createdAt: at,
    updatedAt: at,
  };
  await commit(ctx, [
    ctx.db.insert(events).values({
      id: eventId,
      accountId: principal.accountId,
      type: eventTypes.webhookTest,
      payload: { endpoint_id: endpoint.id, message: "A test event sent on request: no action is needed." },
      dedupeKey: `${eventTypes.webhookTest}:${eventId}`,
      createdAt: at,
      deliveredAt: at,
    }),
    ctx.db.insert(webhookDeliveries).values(delivery),
    ...auditStatements(ctx, {
      action: "webhook_endpoint.tested",
      accountId: endpoint.accountId,
      resourceId: endpoint.id,
      after: { deliveryId: delivery.id },
    }),
  ]);
  return attempt(ctx, delivery, endpoint, "test");
}

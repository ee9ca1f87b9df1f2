import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import {
  accounts,
  events,
  sandboxAccounts,
  type WebhookAttempt,
  type WebhookAttemptTrigger,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  webhookDeliveries,
  webhookEndpoints,
} from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import { logError, logInfo } from "../../platform/logger";
import { commitAudited } from "../audit/audit-log";
import type { DomainContext } from "../context";
import { disableEndpoint, signingSecrets } from "./endpoints";
import { eventBody } from "./event-body";
import { nextAttemptAt } from "./schedule";
import { type SendOutcome, sendSigned } from "./send";

/** A claimed delivery is not attempted by anyone else for this long (well above the 15 s timeout). */
export const CLAIM_MS = 2 * MINUTE;
/** The delivery log keeps this many attempts per delivery. */
export const MAX_LOGGED_ATTEMPTS = 20;

/** What an attempt on a claimed delivery leads to. */
interface Settled {
  status: WebhookDeliveryRow["status"];
  nextAttemptAt: number | null;
  automaticAttempts: number;
  firstAttemptAt: number | null;
}

const claimFree = (at: number) =>
  sql`(${webhookDeliveries.claimedUntil} IS NULL OR ${webhookDeliveries.claimedUntil} <= ${at})`;

/**
 * Claims a delivery whose automatic attempt is due. Only one claimer wins, and only while the attempt is due:
 * a duplicate queue message — during the attempt or after it was recorded — finds nothing and sends nothing.
 */
export async function claimDueDelivery(ctx: DomainContext, deliveryId: string, at: number) {
  return ctx.db
    .update(webhookDeliveries)
    .set({ claimedUntil: at + CLAIM_MS })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.status, "pending"),
        sql`${webhookDeliveries.nextAttemptAt} <= ${at}`,
        claimFree(at),
      ) as SQL,
    )
    .returning()
    .get();
}

/** Claims any delivery of an endpoint for a manual attempt, unless an attempt of it is in progress. */
export async function claimForManualAttempt(
  ctx: DomainContext,
  endpoint: { id: string; accountId: string },
  deliveryId: string,
  at: number,
) {
  const claim = ctx.db
    .update(webhookDeliveries)
    .set({ claimedUntil: at + CLAIM_MS })
    .where(
      and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.endpointId, endpoint.id), claimFree(at)) as SQL,
    )
    .returning();
  const [claimed] = await commitAudited(ctx, claim, {
    action: "webhook_delivery.retried",
    accountId: endpoint.accountId,
    resourceId: deliveryId,
  });
  return claimed;
}

/** The automatic attempt of a delivery this consumer claimed: skipped (and failed) if its endpoint is disabled. */
export async function attemptClaimed(ctx: DomainContext, delivery: WebhookDeliveryRow): Promise<WebhookDeliveryRow> {
  const endpoint = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.id, delivery.endpointId))
    .get();
  if (endpoint?.status !== "enabled") {
    return record(ctx, delivery, null, {
      status: "failed",
      nextAttemptAt: null,
      automaticAttempts: delivery.automaticAttempts,
      firstAttemptAt: delivery.firstAttemptAt,
    });
  }
  return attempt(ctx, delivery, endpoint, "automatic");
}

/** Sends the delivery's event to the endpoint once, records the attempt, and applies 410 and exhaustion. */
export async function attempt(
  ctx: DomainContext,
  delivery: WebhookDeliveryRow,
  endpoint: WebhookEndpointRow,
  trigger: WebhookAttemptTrigger,
): Promise<WebhookDeliveryRow> {
  const found = await loadEvent(ctx, delivery.eventId);
  const attemptedAt = now();
  const outcome = found
    ? await sendSigned(endpoint.url, await signingSecrets(ctx, endpoint, attemptedAt), {
        id: found.event.id,
        body: JSON.stringify(eventBody(found.event, found.sandboxOf === null)),
      })
    : missingEvent();
  const settled = settle(delivery, trigger, outcome, attemptedAt);
  const entry: WebhookAttempt = {
    attempt: delivery.attemptCount + 1,
    trigger,
    attemptedAt,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error,
  };
  const recorded = await record(ctx, delivery, entry, settled);
  if (outcome.gone) await disableEndpoint(ctx, endpoint.id, "gone");
  if (trigger === "automatic" && settled.status === "failed" && !outcome.gone) await exhausted(ctx, endpoint);
  return recorded;
}

/**
 * The delivery's event, and whether its account is a sandbox twin (`sandboxOf`: the live account, else null) —
 * its `livemode` — read in the same query through the unique index on `sandbox_accounts.sandbox_account_id`.
 */
function loadEvent(ctx: DomainContext, eventId: string) {
  return ctx.db
    .select({ event: events, sandboxOf: sandboxAccounts.liveAccountId })
    .from(events)
    .leftJoin(sandboxAccounts, eq(sandboxAccounts.sandboxAccountId, events.accountId))
    .where(eq(events.id, eventId))
    .get();
}

function missingEvent(): SendOutcome {
  return {
    statusCode: null,
    durationMs: 0,
    error: "the event no longer exists",
    ok: false,
    gone: false,
    retryAfterMs: null,
  };
}

/** The delivery's next state: 2xx succeeds; 410 fails for good; otherwise the schedule decides (automatic only). */
export function settle(
  delivery: Pick<WebhookDeliveryRow, "status" | "nextAttemptAt" | "automaticAttempts" | "firstAttemptAt">,
  trigger: WebhookAttemptTrigger,
  outcome: Pick<SendOutcome, "ok" | "gone" | "retryAfterMs">,
  attemptedAt: number,
): Settled {
  const automatic = trigger === "automatic";
  const automaticAttempts = delivery.automaticAttempts + (automatic ? 1 : 0);
  const firstAttemptAt = automatic ? (delivery.firstAttemptAt ?? attemptedAt) : delivery.firstAttemptAt;
  const base = { automaticAttempts, firstAttemptAt };
  if (outcome.ok) return { ...base, status: "succeeded", nextAttemptAt: null };
  if (outcome.gone) return { ...base, status: "failed", nextAttemptAt: null };
  const next = automatic
    ? nextAttemptAt(firstAttemptAt as number, automaticAttempts, attemptedAt, outcome.retryAfterMs)
    : delivery.status === "pending"
      ? delivery.nextAttemptAt
      : null;
  return { ...base, status: next === null ? "failed" : "pending", nextAttemptAt: next };
}

/** Only the holder of a claim records under it (a claim is its expiry instant). */
function heldClaim(delivery: WebhookDeliveryRow) {
  return delivery.claimedUntil === null
    ? isNull(webhookDeliveries.claimedUntil)
    : eq(webhookDeliveries.claimedUntil, delivery.claimedUntil);
}

/** Records the attempt and releases the claim (and the queue lease) in one write. */
async function record(
  ctx: DomainContext,
  delivery: WebhookDeliveryRow,
  entry: WebhookAttempt | null,
  settled: Settled,
): Promise<WebhookDeliveryRow> {
  const attempts = entry ? [...delivery.attempts, entry].slice(-MAX_LOGGED_ATTEMPTS) : delivery.attempts;
  const updated = await ctx.db
    .update(webhookDeliveries)
    .set({
      ...settled,
      attemptCount: delivery.attemptCount + (entry ? 1 : 0),
      attempts,
      claimedUntil: null,
      queuedUntil: null,
      updatedAt: now(),
    })
    .where(and(eq(webhookDeliveries.id, delivery.id), heldClaim(delivery)))
    .returning()
    .get();
  // Deleted meanwhile (its endpoint was deleted), or the claim ran out and another attempt took over.
  return updated ?? { ...delivery, ...settled, attempts };
}

/**
 * A delivery failed every retry: the endpoint is disabled, and the account's notification address (else its
 * login email) is told once, when this call is the one that disabled it.
 */
async function exhausted(ctx: DomainContext, endpoint: WebhookEndpointRow): Promise<void> {
  if (!(await disableEndpoint(ctx, endpoint.id, "failing"))) return;
  const account = await ctx.db
    .select({ email: accounts.email, notificationEmail: accounts.notificationEmail })
    .from(accounts)
    .where(eq(accounts.id, endpoint.accountId))
    .get();
  if (!account) return;
  try {
    await ctx.env.EMAIL.send({
      from: ctx.env.NOTIFICATIONS_EMAIL_FROM,
      to: account.notificationEmail ?? account.email,
      subject: "A webhook endpoint was disabled",
      text:
        `Deliveries to your webhook endpoint ${endpoint.id} (${endpoint.url}) failed every retry over 24 hours, ` +
        "so the endpoint was disabled. Fix the receiver, then re-enable it with " +
        `PATCH /v1/webhook-endpoints/${endpoint.id} {"status": "enabled"}; ` +
        "GET /v1/events lists the events of the last 30 days, and failed deliveries can be retried.",
    });
    logInfo("webhook_endpoint_disabled", { endpoint: endpoint.id, reason: "failing" });
  } catch (error) {
    // The endpoint stays disabled either way; the mail is a courtesy.
    logError("webhook_disable_mail_failed", { endpoint: endpoint.id }, error);
  }
}

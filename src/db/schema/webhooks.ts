import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

// ── Webhook endpoints and their deliveries (src/domain/webhooks) ─────────────────────────────────────

export const webhookEndpointStatuses = ["enabled", "disabled"] as const;
export type WebhookEndpointStatus = (typeof webhookEndpointStatuses)[number];

/** Why an endpoint is disabled: by its owner, by a 410 answer, or after a delivery exhausted its retries. */
export const webhookDisabledReasons = ["manual", "gone", "failing"] as const;
export type WebhookDisabledReason = (typeof webhookDisabledReasons)[number];

export const webhookEndpoints = sqliteTable(
  "webhook_endpoints",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    url: text("url").notNull(),
    description: text("description"),
    /** Event types delivered; `["*"]` = every type. */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status", { enum: webhookEndpointStatuses }).notNull(),
    disabledReason: text("disabled_reason", { enum: webhookDisabledReasons }),
    /** The signing secret, sealed (AES-GCM with SEALING_KEY): deliveries need it back to sign. */
    secretSealed: text("secret_sealed").notNull(),
    /** After a rotation the previous secret signs beside the new one until `previous_secret_expires_at`. */
    previousSecretSealed: text("previous_secret_sealed"),
    previousSecretExpiresAt: integer("previous_secret_expires_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("webhook_endpoints_account").on(t.accountId, t.id)],
);

export const webhookDeliveryStatuses = ["pending", "succeeded", "failed"] as const;
export type WebhookDeliveryStatus = (typeof webhookDeliveryStatuses)[number];

export const webhookAttemptTriggers = ["automatic", "manual", "test"] as const;
export type WebhookAttemptTrigger = (typeof webhookAttemptTriggers)[number];

/** One HTTP attempt of a delivery, as the delivery log shows it. */
export interface WebhookAttempt {
  attempt: number;
  trigger: WebhookAttemptTrigger;
  attemptedAt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * One event for one endpoint (unique per event and endpoint): its state, its schedule and its attempt log.
 * An attempt is due when `status = 'pending'` and `next_attempt_at` has come; the cron hands due deliveries to the
 * queue (`queued_until` keeps it from handing them twice while queued) and a consumer claims one (`claimed_until`)
 * before sending, so a duplicate message never sends the same attempt twice.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    endpointId: text("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: "cascade" }),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    status: text("status", { enum: webhookDeliveryStatuses }).notNull(),
    /** Attempts made, automatic and manual. */
    attemptCount: integer("attempt_count").notNull().default(0),
    /** Automatic attempts made: the position in the retry schedule. */
    automaticAttempts: integer("automatic_attempts").notNull().default(0),
    firstAttemptAt: integer("first_attempt_at"),
    /** When the next automatic attempt is due; null when none is scheduled. */
    nextAttemptAt: integer("next_attempt_at"),
    queuedUntil: integer("queued_until"),
    claimedUntil: integer("claimed_until"),
    /** The newest attempts, oldest first (at most 20). */
    attempts: text("attempts", { mode: "json" }).$type<WebhookAttempt[]>().notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_endpoint").on(t.eventId, t.endpointId),
    index("webhook_deliveries_endpoint").on(t.endpointId, t.id),
    index("webhook_deliveries_due").on(t.nextAttemptAt).where(sql`status = 'pending'`),
    check("webhook_deliveries_status_known", sql`status IN ('pending', 'succeeded', 'failed')`),
  ],
);

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

import { z } from "@hono/zod-openapi";
import {
  products,
  type WebhookAttempt,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
  webhookAttemptTriggers,
  webhookDeliveryStatuses,
  webhookDisabledReasons,
  webhookEndpointStatuses,
} from "../db/schema";
import { eventTypes } from "../domain/events";
import { type EventRecord, eventBody } from "../domain/webhooks/event-body";
import { toIso } from "../platform/clock";
import { id, idParam, integer, list, text, timestamp, token } from "../platform/fields";
import { trafficSpikeDigestSchema, trafficSpikeEndSchema } from "./traffic-spike";

// ── Events ─────────────────────────────────────────────────────────────────────────────────────────

export const EVENT_TYPES = Object.values(eventTypes) as [string, ...string[]];
export const eventTypeSchema = z.enum(EVENT_TYPES).openapi({ example: "order.completed" });

const gb = () => z.number().min(0);

/** The `data` of each event type: documented in the OpenAPI `webhooks` section, one entry per type. */
export const eventPayloads = {
  "order.completed": z
    .object({
      order_id: id("order"),
      product: z.enum(products),
      total_usd: z.number(),
      batch_id: id("batch").optional().openapi({ description: "ISP orders: the batch the order created." }),
    })
    .openapi("OrderCompletedData"),
  "isp_batch.expiring": z
    .object({
      batch_id: id("batch"),
      expires_at: timestamp(),
      days_left: z.union([z.literal(7), z.literal(3)]),
      auto_renew: z.boolean(),
      renewal_price_usd: z.number(),
    })
    .openapi("IspBatchExpiringData"),
  "traffic.threshold": z
    .object({
      scope: z.enum(["pool", "subuser"]),
      product: z.enum(products).optional().openapi({ description: "scope `pool`: the pool's product." }),
      subuser: id("subuser").optional().openapi({ description: "scope `subuser`: the sub-user." }),
      period: z
        .enum(["month", "day", "lifetime"])
        .optional()
        .openapi({
          description:
            "scope `subuser`: the cap passed — `month` (`traffic_limit_gb`), `day` (`daily_limit_gb`) or " +
            "`lifetime` (`lifetime_limit_gb`). Each is announced once per threshold and period; a lifetime cap " +
            "again after it is changed.",
        }),
      month: token(/^\d{4}-\d{2}$/, 7)
        .optional()
        .openapi({ description: "period `month`: the UTC month." }),
      day: token(/^\d{4}-\d{2}-\d{2}$/, 10)
        .optional()
        .openapi({ description: "period `day`: the UTC day." }),
      threshold_percent: z.union([z.literal(80), z.literal(100)]),
      gb_purchased: gb().optional().openapi({ description: "scope `pool`: GB bought." }),
      gb_limit: gb().optional().openapi({ description: "scope `subuser`: the period's cap in GB." }),
      gb_used: gb(),
    })
    .openapi("TrafficThresholdData"),
  "report_run.completed": z
    .object({ report_id: id("report"), run_id: id("run") })
    .catchall(z.unknown())
    .openapi("ReportRunCompletedData", {
      description:
        "The run's figures, as `GET /reports/runs/{id}` shows them; at a report's `webhook` destination also its " +
        "`download_url`, `download_expires_at` and `report_name`.",
    }),
  "report_run.failed": z
    .object({ report_id: id("report"), run_id: id("run") })
    .catchall(z.unknown())
    .openapi("ReportRunFailedData", { description: "The run, with the reason in `error`." }),
  "webhook.test": z
    .object({
      endpoint_id: id("webhookEndpoint")
        .optional()
        .openapi({ description: "The endpoint tested; absent in a report destination's check." }),
      message: text(200),
    })
    .openapi("WebhookTestData"),
  "subuser.expired": z
    .object({
      subuser: id("subuser"),
      label: text(64),
      expires_at: timestamp(),
    })
    .openapi("SubuserExpiredData"),
  "subuser.new_source": z
    .object({
      subuser: id("subuser"),
      new_blocks: integer(1, 1_000_000).openapi({
        description: "Client blocks first seen since the sub-user's previous `subuser.new_source` event.",
      }),
      blocks: list(token(/^[0-9A-Fa-f:.]+\/\d{1,3}$/, 49), 10).openapi({
        description: "Up to 10 of them (IPv4 /24, IPv6 /64), as `GET /subusers/{id}/sources` lists them.",
      }),
      window_minutes: integer(1, 1440).openapi({ description: "At most one event per sub-user in this many minutes." }),
    })
    .openapi("SubuserNewSourceData", {
      description:
        "Traffic of a sub-user with `alert_on_new_source` came from client blocks it had not used in 30 days.",
    }),
  "subuser.traffic_spike": trafficSpikeDigestSchema.openapi("SubuserTrafficSpikeData", {
    description:
      "Sub-users' traffic went well above their own baselines: one event per account per window, naming every " +
      "episode it announces (the top-level figures are the first's).",
  }),
  "subuser.traffic_spike_ended": trafficSpikeEndSchema.openapi("SubuserTrafficSpikeEndedData", {
    description: "A spike episode ended: its rate stayed near the baseline for 30 minutes.",
  }),
  "budget.threshold": z
    .object({
      month: token(/^\d{4}-\d{2}$/, 7).openapi({ description: "The budget's month (UTC)." }),
      threshold_percent: integer(1, 1000),
      budget_usd: z.number(),
      spent_usd: z.number().openapi({ description: "The month's spend once the charge that crossed it was made." }),
      hard_stop: z.boolean(),
    })
    .openapi("BudgetThresholdData"),
  "balance.low": z
    .object({
      balance_usd: z.number(),
      need_usd: z.number().openapi({ description: "`renewals_usd` + `forecast_usd`: what the horizon needs." }),
      renewals_usd: z.number().openapi({ description: "Renewals due within the horizon, at their current price." }),
      forecast_usd: z.number().openapi({
        description:
          "The bandwidth the last 7 days' pace would use in the horizon beyond what the pools hold, at today's prices.",
      }),
      horizon_days: z.literal(7),
    })
    .openapi("BalanceLowData"),
} satisfies Record<(typeof EVENT_TYPES)[number], z.ZodType>;

export const eventSchema = z
  .object({
    id: id("event").openapi({ description: "Also the `webhook-id` header of every delivery of the event." }),
    type: eventTypeSchema,
    created_at: timestamp(),
    livemode: z.boolean().openapi({
      description:
        "`false` for an event of the sandbox (its `test_` keys' account: only its own endpoints receive it), " +
        "`true` otherwise. Part of every delivered body, so the signature covers it.",
    }),
    data: z.record(z.string(), z.unknown()).openapi({ description: "The type's payload (see `webhooks`)." }),
  })
  .openapi("Event");

export const eventIdParam = z.object({ id: idParam("event").openapi({ param: { name: "id", in: "path" } }) });

/**
 * The event as `GET /events` shows it and as every delivery's body carries it. `livemode` is the caller's mode:
 * a key reads only its own account's events, and `test_` keys exist only on sandbox twins.
 */
export const presentEvent: (event: EventRecord, livemode: boolean) => z.infer<typeof eventSchema> = eventBody;

// ── Endpoints ──────────────────────────────────────────────────────────────────────────────────────

export const WEBHOOK_URL_MAX_LENGTH = 2048;

export const webhookUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(WEBHOOK_URL_MAX_LENGTH)
  .openapi({
    description:
      "A public `https` URL without credentials. Loopback, private, link-local and metadata addresses are refused.",
    example: "https://hooks.example.com/proxy-events",
  });

export const subscribedEventsSchema = list(z.enum(["*", ...EVENT_TYPES]), EVENT_TYPES.length + 1)
  .min(1)
  .refine((types) => new Set(types).size === types.length, "must not repeat a type")
  .openapi({
    description: "Event types to deliver; `*` delivers every type, present and future.",
    example: ["order.completed", "isp_batch.expiring"],
  });

export const descriptionSchema = text(200).nullable();

export const webhookEndpointSchema = z
  .object({
    id: id("webhookEndpoint"),
    url: webhookUrlSchema,
    description: descriptionSchema,
    events: subscribedEventsSchema,
    status: z.enum(webhookEndpointStatuses),
    disabled_reason: z
      .enum(webhookDisabledReasons)
      .nullable()
      .openapi({
        description:
          "Why the endpoint is disabled: `manual` (PATCH), `gone` (it answered 410) or `failing` (a delivery " +
          "failed every retry). null while enabled.",
      }),
    previous_secret_expires_at: timestamp().nullable().openapi({
      description: "After a rotation: until then deliveries are signed with the previous secret as well.",
    }),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .openapi("WebhookEndpoint");

export const webhookSecretSchema = token(/^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/, 96).openapi({
  description: "The Standard Webhooks signing secret; shown only here and stored sealed.",
  example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7Lr8Yw9JKGg=",
});

export const webhookEndpointWithSecretSchema = webhookEndpointSchema
  .extend({ secret: webhookSecretSchema })
  .openapi("WebhookEndpointWithSecret");

export const webhookEndpointIdParam = z.object({
  id: idParam("webhookEndpoint").openapi({ param: { name: "id", in: "path" } }),
});

export function presentEndpoint(endpoint: WebhookEndpointRow): z.infer<typeof webhookEndpointSchema> {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    previous_secret_expires_at:
      endpoint.previousSecretExpiresAt === null ? null : toIso(endpoint.previousSecretExpiresAt),
    created_at: toIso(endpoint.createdAt),
    updated_at: toIso(endpoint.updatedAt),
  };
}

// ── Deliveries ─────────────────────────────────────────────────────────────────────────────────────

export const attemptSchema = z
  .object({
    attempt: integer(1, 1_000_000),
    trigger: z.enum(webhookAttemptTriggers).openapi({
      description: "`automatic` (the schedule), `manual` (the retry operation) or `test`.",
    }),
    attempted_at: timestamp(),
    status_code: integer(100, 599).nullable().openapi({ description: "null when no answer came (see `error`)." }),
    duration_ms: integer(0, 60_000),
    error: text(300).nullable().openapi({ description: "Why the attempt failed; null on a 2xx answer." }),
  })
  .openapi("WebhookAttempt");

export const webhookDeliverySchema = z
  .object({
    id: id("webhookDelivery"),
    endpoint_id: id("webhookEndpoint"),
    event_id: id("event"),
    event_type: eventTypeSchema,
    status: z.enum(webhookDeliveryStatuses).openapi({
      description:
        "`pending` (an automatic attempt is scheduled), `succeeded` (the newest attempt got a 2xx) or `failed`.",
    }),
    attempt_count: integer(0, 1_000_000),
    next_retry_at: timestamp().nullable().openapi({ description: "The next automatic attempt; null when none." }),
    last_attempt: attemptSchema.nullable(),
    attempts: list(attemptSchema, 20).openapi({ description: "The newest attempts (up to 20), oldest first." }),
    created_at: timestamp(),
  })
  .openapi("WebhookDelivery");

export const deliveryIdParams = webhookEndpointIdParam.extend({
  delivery_id: idParam("webhookDelivery").openapi({ param: { name: "delivery_id", in: "path" } }),
});

function presentAttempt(attempt: WebhookAttempt): z.infer<typeof attemptSchema> {
  return {
    attempt: attempt.attempt,
    trigger: attempt.trigger,
    attempted_at: toIso(attempt.attemptedAt),
    status_code: attempt.statusCode,
    duration_ms: attempt.durationMs,
    error: attempt.error,
  };
}

export function presentDelivery(delivery: WebhookDeliveryRow): z.infer<typeof webhookDeliverySchema> {
  const attempts = delivery.attempts.map(presentAttempt);
  return {
    id: delivery.id,
    endpoint_id: delivery.endpointId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    attempt_count: delivery.attemptCount,
    next_retry_at:
      delivery.status === "pending" && delivery.nextAttemptAt !== null ? toIso(delivery.nextAttemptAt) : null,
    last_attempt: attempts.at(-1) ?? null,
    attempts,
    created_at: toIso(delivery.createdAt),
  };
}

import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { token } from "../../platform/fields";
import { eventPayloads, eventSchema } from "../../resources/webhook";

const deliveryHeaders = z.object({
  "webhook-id": token(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/, 30).openapi({
    description: "The event id: the same on every retry, the receiver's idempotency key.",
  }),
  "webhook-timestamp": token(/^\d{1,12}$/, 12).openapi({
    description: "Unix seconds of this attempt; refuse deliveries far from your clock (e.g. 5 minutes).",
  }),
  "webhook-signature": token(/^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)?$/, 200).openapi({
    description:
      "`v1,<base64 HMAC-SHA256 of '{webhook-id}.{webhook-timestamp}.{body}' with the secret's bytes>`; two, " +
      "space-separated, for 24 hours after a secret rotation. Any one that verifies is enough.",
  }),
});

const DESCRIPTIONS: Record<keyof typeof eventPayloads, string> = {
  "order.completed": "An order completed: a bandwidth order at once, an ISP order when its batch is provisioned.",
  "isp_batch.expiring": "An ISP batch expires in 7 days, then in 3 days (once each per period).",
  "traffic.threshold": "A bandwidth pool, or a sub-user's monthly cap, passed 80% or 100% used.",
  "report_run.completed":
    "A report run completed. A report whose destination is `webhook` also receives it at the destination's URL, " +
    "signed with the destination's secret, under the same event id, with `download_url`, `download_expires_at` " +
    "and `report_name` in `data`.",
  "report_run.failed": "A report run failed.",
  "webhook.test":
    "Sent on request by `POST /webhook-endpoints/{id}/test`, and to a report's `webhook` destination when it is " +
    "created or its URL changes (answer 2xx to accept it; that one has no `endpoint_id`).",
  "subuser.expired":
    "A sub-user reached its `expires_at`: the gateway refuses its requests from then on (403 subuser-expired). " +
    "Once per expiry: a sub-user extended and lapsing again raises another.",
  "subuser.new_source":
    "A sub-user with `alert_on_new_source` sent traffic from a client block (IPv4 /24, IPv6 /64) not seen in its " +
    "last 30 days. At most one per sub-user every 15 minutes: `new_blocks` counts every new block since the " +
    "previous event (blocks that arrive inside the window are counted in the next one).",
  "subuser.traffic_spike":
    "Sub-users' traffic went well above their own baselines — the same hour of the week over their past 4 weeks — " +
    "by enough traffic to matter, as set by each one's `spike_sensitivity`. One event per account per window: the " +
    "first episode after a quiet hour is announced at once; episodes that start within an hour of it are announced " +
    "together at the hour's end. Each episode names its observed rate, baseline, top domains and client sources, " +
    "and the action taken (`spike_action`, taken at once whatever the notification waits for); the top-level " +
    "figures are the first episode's, `episodes` lists them all (up to 100) and `digest` names the notification.",
  "subuser.traffic_spike_ended":
    "A spike episode ended (its rate stayed near the baseline for 30 minutes): its peak, traffic and top domains " +
    "and sources. An action it took holds until the episode is acknowledged.",
  "budget.threshold":
    "The month's spend (UTC calendar month) reached a threshold of the account's budget (`PUT /budget`), counted as " +
    "charges are made: once per month, threshold and budget amount (a new amount re-arms the thresholds).",
  "balance.low":
    "The balance fell below what the next 7 days need: renewals due and the usage forecast's shortfall. Once per " +
    "crossing: another is sent only after the balance was back above the need (e.g. a top-up).",
};

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, the body an event (`{id, type, created_at, livemode,
 * data}`) whose `data` is the type's payload, with the Standard Webhooks headers every delivery carries.
 */
export function registerEventWebhooks(app: OpenAPIHono<AppEnv>): void {
  for (const [type, data] of Object.entries(eventPayloads)) {
    const name = type.replace(/(^|[._])(\w)/g, (_match, _sep, letter: string) => letter.toUpperCase());
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: type,
      operationId: `on${name}`,
      tags: ["Events"],
      // The receiver authenticates a delivery by its signature headers, not by a credential of ours.
      security: [],
      summary: type,
      description: DESCRIPTIONS[type as keyof typeof eventPayloads],
      request: {
        headers: deliveryHeaders,
        body: {
          required: true,
          content: {
            "application/json": {
              schema: eventSchema.extend({ type: z.literal(type), data }).openapi(`${name}Event`),
            },
          },
        },
      },
      responses: {
        200: { description: "Any 2xx acknowledges the delivery. Other answers (3xx included) are retried." },
        410: { description: "Gone: the endpoint is disabled and nothing more is sent to it." },
      },
    });
  }
}

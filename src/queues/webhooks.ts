import { domainContext } from "../domain/context";
import { attemptClaimed, claimDueDelivery } from "../domain/webhooks/attempts";
import type { WebhookMessage } from "../domain/webhooks/dispatch";
import { now } from "../platform/clock";
import { logError } from "../platform/logger";

/**
 * The `webhooks` queue's consumer: one due attempt per message. Endpoints are served in parallel, each endpoint's
 * messages in the order the cron handed them over (event order). A message whose delivery is no longer due (a
 * duplicate, or one already attempted) is acknowledged without sending. A message that fails is retried by the
 * queue; if it never succeeds, the delivery's queue lease runs out and the cron hands it over again.
 */
export async function consumeWebhooks(batch: MessageBatch<WebhookMessage>, env: Cloudflare.Env): Promise<void> {
  const ctx = domainContext(env);
  const byEndpoint = Map.groupBy(batch.messages, (message) => message.body.endpointId);
  await Promise.all(
    [...byEndpoint.values()].map(async (messages) => {
      for (const message of messages) {
        try {
          const claimed = await claimDueDelivery(ctx, message.body.deliveryId, now());
          if (claimed) await attemptClaimed(ctx, claimed);
          message.ack();
        } catch (error) {
          logError("webhook_message_failed", { delivery: message.body.deliveryId }, error);
          message.retry({ delaySeconds: 30 });
        }
      }
    }),
  );
}

import { domainContext } from "../domain/context";
import { applyUsageMessage } from "../domain/traffic/apply-usage";
import type { UsageMessage } from "../domain/traffic/usage-messages";
import { logError } from "../platform/logger";

/**
 * The `usage` queue's consumer. Accounts are applied in parallel, each account's messages in order; a message
 * that fails is retried (the queue redelivers it, up to its retry limit, then to the dead-letter queue) and,
 * since every effect is keyed by the message, applies only what it had not applied yet.
 */
export async function consumeUsage(batch: MessageBatch<UsageMessage>, env: Cloudflare.Env): Promise<void> {
  const ctx = domainContext(env);
  const byAccount = new Map<string, Array<Message<UsageMessage>>>();
  for (const message of batch.messages) {
    const list = byAccount.get(message.body.accountId) ?? [];
    list.push(message);
    byAccount.set(message.body.accountId, list);
  }
  await Promise.all(
    [...byAccount.values()].map(async (messages) => {
      for (const message of messages) {
        try {
          await applyUsageMessage(ctx, message.body);
          message.ack();
        } catch (error) {
          logError("usage_message_failed", { key: message.body.key, attempts: message.attempts }, error);
          message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
        }
      }
    }),
  );
}

import { domainContext } from "../domain/context";
import { applyUsageMessages } from "../domain/traffic/apply-usage";
import type { UsageMessage } from "../domain/traffic/usage-messages";
import { logError } from "../platform/logger";

/**
 * The `usage` queue's consumer. Each account's messages are applied together (one call per store for all of
 * them), accounts in parallel. When an account's application fails, its messages are retried (the queue
 * redelivers them, up to its retry limit, then to the dead-letter queue) and, since every effect is keyed by
 * its message, only what was not applied yet happens.
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
    [...byAccount].map(async ([accountId, messages]) => {
      try {
        await applyUsageMessages(
          ctx,
          accountId,
          messages.map((message) => message.body),
        );
        for (const message of messages) message.ack();
      } catch (error) {
        const keys = messages.map((message) => message.body.key);
        const attempts = Math.max(...messages.map((message) => message.attempts));
        logError("usage_messages_failed", { accountId, keys: keys.join(" "), attempts }, error);
        for (const message of messages) message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
      }
    }),
  );
}

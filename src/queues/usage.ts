import { domainContext } from "../domain/context";
import { applyUsageMessages } from "../domain/traffic/apply-usage";
import { receivedUsageMessage, type UsageMessage } from "../domain/traffic/usage-messages";
import { logError } from "../platform/logger";

/**
 * The `usage` queue's consumer. Each account's messages are applied together (one call per store for all of
 * them), accounts in parallel. When an account's application fails, its messages are retried (the queue
 * redelivers them, up to its retry limit, then to the dead-letter queue) and, since every effect is keyed by
 * its message, only what was not applied yet happens.
 */
export async function consumeUsage(batch: MessageBatch<unknown>, env: Cloudflare.Env): Promise<void> {
  const ctx = domainContext(env);
  const byAccount = new Map<string, Array<{ message: Message<unknown>; body: UsageMessage }>>();
  for (const message of batch.messages) {
    const body = usageMessageOf(message);
    if (!body) continue;
    const list = byAccount.get(body.accountId) ?? [];
    list.push({ message, body });
    byAccount.set(body.accountId, list);
  }
  await Promise.all(
    [...byAccount].map(async ([accountId, entries]) => {
      try {
        await applyUsageMessages(
          ctx,
          accountId,
          entries.map((entry) => entry.body),
        );
        for (const { message } of entries) message.ack();
      } catch (error) {
        const keys = entries.map((entry) => entry.body.key);
        const attempts = Math.max(...entries.map((entry) => entry.message.attempts));
        logError("usage_messages_failed", { accountId, keys: keys.join(" "), attempts }, error);
        for (const { message } of entries) message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
      }
    }),
  );
}

/**
 * A message's usage: sent as JSON text (message-packing.ts measures each message on the text it sends); one
 * enqueued as a JSON value before that is read as is. A body that is neither is retried on its own, so it reaches
 * the dead-letter queue without holding back the rest of the batch.
 */
function usageMessageOf(message: Message<unknown>): UsageMessage | null {
  try {
    return receivedUsageMessage(typeof message.body === "string" ? JSON.parse(message.body) : message.body);
  } catch (error) {
    logError("usage_message_unreadable", { id: message.id, attempts: message.attempts }, error);
    message.retry();
    return null;
  }
}

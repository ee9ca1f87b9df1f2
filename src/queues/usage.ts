import { domainContext } from "../domain/context";
import { applyUsageParts, settleAccountUsage } from "../domain/traffic/apply-usage";
import { readUsageMessage, type UsagePart } from "../domain/traffic/usage-messages";
import { logError } from "../platform/logger";

interface AccountWork {
  parts: UsagePart[];
  /** The account's traffic store asked for its metered usage to be settled. */
  settle: boolean;
  messages: Set<Message<unknown>>;
}

/**
 * The `usage` queue's consumer. A message carries usage parts of one or more accounts, or asks for an account's
 * metered usage to be settled. Each part is applied once however often it arrives: parts with a key already seen
 * in this batch (racing retries of one gateway batch, a redelivery next to its original) are set aside before
 * anything is applied, and every store remembers the keys it applied. Each account's parts are applied together
 * (one call per store), accounts in parallel. A message is acknowledged once every account it carries is done;
 * otherwise it is retried whole (the queue redelivers it, up to its retry limit, then to the dead-letter queue)
 * and only what was not applied yet happens.
 */
export async function consumeUsage(batch: MessageBatch<unknown>, env: Cloudflare.Env): Promise<void> {
  const ctx = domainContext(env);
  const work = new Map<string, AccountWork>();
  const accountsOf = new Map<Message<unknown>, Set<string>>();
  const seen = new Set<string>();
  const workOf = (accountId: string, message: Message<unknown>) => {
    const entry = work.get(accountId) ?? { parts: [], settle: false, messages: new Set() };
    entry.messages.add(message);
    work.set(accountId, entry);
    const accounts = accountsOf.get(message) ?? new Set<string>();
    accountsOf.set(message, accounts.add(accountId));
    return entry;
  };
  for (const message of batch.messages) {
    const body = read(message);
    if (body === null) continue;
    if ("settle" in body) workOf(body.settle, message).settle = true;
    else {
      for (const part of body.parts) {
        const entry = workOf(part.accountId, message);
        if (!seen.has(part.key)) entry.parts.push(part);
        seen.add(part.key);
      }
    }
  }
  const failed = new Set<string>();
  await Promise.all(
    [...work].map(async ([accountId, { parts, settle, messages }]) => {
      try {
        if (parts.length > 0) await applyUsageParts(ctx, accountId, parts);
        else if (settle) await settleAccountUsage(ctx, accountId);
      } catch (error) {
        failed.add(accountId);
        const attempts = Math.max(...[...messages].map((message) => message.attempts));
        const keys = parts.map((part) => part.key).join(" ");
        logError("usage_failed", { accountId, keys, settle, attempts }, error);
      }
    }),
  );
  for (const [message, accounts] of accountsOf) {
    if ([...accounts].some((accountId) => failed.has(accountId))) {
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    } else {
      message.ack();
    }
  }
}

/**
 * A message's content: sent as JSON text (message-packing.ts measures each message on the text it sends); one
 * enqueued as a JSON value before that is read as is. A body that is neither is retried on its own, so it reaches
 * the dead-letter queue without holding back the rest of the batch.
 */
function read(message: Message<unknown>): ReturnType<typeof readUsageMessage> | null {
  try {
    return readUsageMessage(typeof message.body === "string" ? JSON.parse(message.body) : message.body);
  } catch (error) {
    logError("usage_message_unreadable", { id: message.id, attempts: message.attempts }, error);
    message.retry();
    return null;
  }
}

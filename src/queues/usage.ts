import { domainContext } from "../domain/context";
import { applyUsageParts, settleAccountUsage } from "../domain/traffic/apply-usage";
import { enqueueMessages, type PackedMessage, packMessages } from "../domain/traffic/message-packing";
import {
  readUsageMessage,
  type SentUsagePart,
  sentPartsOf,
  type UsageMessageBody,
  type UsagePart,
} from "../domain/traffic/usage-messages";
import { shardOf, usageShards } from "../domain/traffic/usage-shards";
import { storeName } from "../durable-objects/traffic-store";
import { gunzipText } from "../platform/gzip";
import { logError } from "../platform/logger";

/**
 * The `usage` queue's consumer: the route's messages (parts of many accounts) are forwarded, part by part, to each
 * account's shard queue, each part stamped with when the route enqueued it (its message's time: a copy of the part
 * can only have been applied since). A part key seen twice in the batch is forwarded once. A message is
 * acknowledged once everything it holds was forwarded; otherwise it is retried whole and its parts forwarded again
 * (the stores apply each key once). `settle` messages (a store's alarm) are settled here. With no shard queue bound,
 * the parts are applied here (`consumeUsage`).
 */
export async function routeUsage(batch: MessageBatch<unknown>, env: Cloudflare.Env): Promise<void> {
  const shards = usageShards(env);
  if (shards.length === 0) return consumeUsage(batch, env);
  const ctx = domainContext(env);
  const perShard = new Map<number, { parts: PackedMessage[]; messages: Set<Message<unknown>> }>();
  const settles: Array<{ accountId: string; shard: number; message: Message<unknown> }> = [];
  const seen = new Set<string>();
  const handled = new Set<Message<unknown>>();
  for (const message of batch.messages) {
    const body = (await read(message))?.body ?? null;
    if (body === null) continue;
    handled.add(message);
    if ("settle" in body) {
      settles.push({ accountId: body.settle, shard: body.shard ?? 0, message });
      continue;
    }
    for (const part of sentPartsOf(body)) {
      if (seen.has(part.key)) continue;
      seen.add(part.key);
      const stamped: SentUsagePart = { ...part, receivedAt: part.receivedAt ?? message.timestamp.getTime() };
      const text = JSON.stringify(stamped);
      // By store: a sharded account's stores spread over the queues, and each store's parts stay on one.
      const shard = shardOf(storeName(part.accountId, part.shard ?? 0), shards.length);
      const entry = perShard.get(shard) ?? { parts: [], messages: new Set() };
      entry.parts.push({ text, bytes: text.length });
      entry.messages.add(message);
      perShard.set(shard, entry);
    }
  }
  const failed = new Set<Message<unknown>>();
  await Promise.all([
    ...[...perShard].map(async ([shard, { parts, messages }]) => {
      try {
        await enqueueMessages(shards[shard] as Queue, packMessages('{"parts":[', parts));
      } catch (error) {
        for (const message of messages) failed.add(message);
        logError("usage_forward_failed", { shard, parts: parts.length }, error);
      }
    }),
    ...settles.map(async ({ accountId, shard, message }) => {
      try {
        await settleAccountUsage(ctx, accountId, shard);
      } catch (error) {
        failed.add(message);
        logError("usage_failed", { accountId, shard, settle: true, attempts: message.attempts }, error);
      }
    }),
  ]);
  for (const message of handled) {
    if (failed.has(message)) message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    else message.ack();
  }
}

/**
 * The usage JSON one store call carries at most: an RPC's arguments are limited to 32 MiB serialized, and a busy
 * account's parts in one batch (up to 100 messages of 800 KB of JSON) can pass it. Past it, the account's parts are
 * applied in several calls, one after another (each part still once: a retry skips what a call before applied).
 */
const INGEST_CALL_BYTES = 8_000_000;

interface StoreWork {
  accountId: string;
  shard: number;
  /** Each part with its share of its message's JSON size (what it weighs in a store call). */
  parts: Array<{ part: UsagePart; bytes: number }>;
  /** The account's traffic store asked for its metered usage to be settled. */
  settle: boolean;
  messages: Set<Message<unknown>>;
}

/**
 * A shard queue's consumer: applies each account's parts with one call to its store, or to each of its stores for
 * a sharded account (stores in parallel). Each
 * part is applied once however often it arrives: parts with a key already seen in this batch are set aside before
 * anything is applied, and every store remembers the keys it applied. A message is acknowledged once every account
 * it carries is done; otherwise it is retried whole (the queue redelivers it, up to its retry limit, then to the
 * dead-letter queue) and only what was not applied yet happens.
 */
export async function consumeUsage(batch: MessageBatch<unknown>, env: Cloudflare.Env): Promise<void> {
  const ctx = domainContext(env);
  const work = new Map<string, StoreWork>();
  const storesOf = new Map<Message<unknown>, Set<string>>();
  const seen = new Set<string>();
  const workOf = (accountId: string, shard: number, message: Message<unknown>) => {
    const name = storeName(accountId, shard);
    const entry = work.get(name) ?? { accountId, shard, parts: [], settle: false, messages: new Set() };
    entry.messages.add(message);
    work.set(name, entry);
    const stores = storesOf.get(message) ?? new Set<string>();
    storesOf.set(message, stores.add(name));
    return entry;
  };
  for (const message of batch.messages) {
    const received = await read(message);
    if (received === null) continue;
    const content = readUsageMessage(received.body);
    if ("settle" in content) workOf(content.settle, content.shard, message).settle = true;
    else {
      const bytes = received.bytes / Math.max(1, content.parts.length);
      for (const part of content.parts) {
        const entry = workOf(part.accountId, part.shard ?? 0, message);
        part.receivedAt ??= message.timestamp.getTime();
        if (!seen.has(part.key)) entry.parts.push({ part, bytes });
        seen.add(part.key);
      }
    }
  }
  const failed = new Set<string>();
  await Promise.all(
    [...work].map(async ([name, { accountId, shard, parts, settle, messages }]) => {
      try {
        for (const group of storeCalls(parts)) await applyUsageParts(ctx, accountId, group, shard);
        if (parts.length === 0 && settle) await settleAccountUsage(ctx, accountId, shard);
      } catch (error) {
        failed.add(name);
        const attempts = Math.max(...[...messages].map((message) => message.attempts));
        const keys = parts.map(({ part }) => part.key).join(" ");
        logError("usage_failed", { accountId, shard, keys, settle, attempts }, error);
      }
    }),
  );
  for (const [message, stores] of storesOf) {
    if ([...stores].some((name) => failed.has(name))) {
      message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
    } else {
      message.ack();
    }
  }
}

/** An account's parts, in order, cut into store calls of at most `INGEST_CALL_BYTES` (a part alone may pass it). */
function storeCalls(parts: Array<{ part: UsagePart; bytes: number }>): UsagePart[][] {
  const calls: UsagePart[][] = [];
  let call: UsagePart[] = [];
  let bytes = 0;
  for (const { part, bytes: size } of parts) {
    if (call.length > 0 && bytes + size > INGEST_CALL_BYTES) {
      calls.push(call);
      call = [];
      bytes = 0;
    }
    call.push(part);
    bytes += size;
  }
  if (call.length > 0) calls.push(call);
  return calls;
}

/**
 * A message's content: gzipped JSON (message-packing.ts), or JSON text or a JSON value as sent before. A body that
 * is none of these is retried on its own, so it reaches the dead-letter queue without holding back the rest.
 * Returned with the size of its JSON.
 */
async function read(message: Message<unknown>): Promise<{ body: UsageMessageBody; bytes: number } | null> {
  try {
    const { body } = message;
    let text: string;
    if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) {
      const bytes = body instanceof ArrayBuffer ? body : new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
      text = await gunzipText(bytes);
    } else text = typeof body === "string" ? body : JSON.stringify(body);
    const value = JSON.parse(text) as UsageMessageBody;
    readUsageMessage(value);
    return { body: value, bytes: text.length };
  } catch (error) {
    logError("usage_message_unreadable", { id: message.id, attempts: message.attempts }, error);
    message.retry();
    return null;
  }
}

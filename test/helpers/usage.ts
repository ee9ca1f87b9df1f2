import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { vi } from "vitest";
import { domainContext } from "../../src/domain/context";
import { settleAccountUsage } from "../../src/domain/traffic/apply-usage";
import { trafficShards } from "../../src/domain/traffic/traffic-shards";
import { usageShards } from "../../src/domain/traffic/usage-shards";
import { UsageBatchLedgerClient } from "../../src/durable-objects/usage-batch-ledger";
import worker from "../../src/index";
import { gunzipText } from "../../src/platform/gzip";
import type { TestAccount } from "./accounts";
import { call, env, gateway, json } from "./http";
import type { RecordFields } from "./usage-record";

export { type RecordFields, usageRecord } from "./usage-record";

export function reportUsage(records: RecordFields[], batchId: string = crypto.randomUUID()) {
  return gateway("/usage", { batch_id: batchId, records });
}

/** Polls `check` until it holds (the usage queue delivers within about a second), or fails after 10 s. */
export async function eventually<T>(
  read: () => Promise<T>,
  holds: (value: T) => boolean,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function traffic(account: TestAccount, product: string, query: string): Promise<Record<string, any>> {
  const response = await call("GET", `/v1/${product}/traffic?${query}`, { token: account.token });
  if (response.status !== 200) throw new Error(`traffic: ${response.status} ${await response.text()}`);
  return json(response);
}

/**
 * Holds the usage queues' messages instead of letting the broker deliver them (as if the consumers were behind),
 * so a test can deliver them by hand, as often as it likes, and read what the consumers acked or retried. `sent` is
 * what the usage route enqueued; each `deliver()` hands all of it to the `usage` queue's consumer (a redelivery of
 * everything), whose forwards to the accounts' shard queues are held too and then delivered to their consumers.
 * The answer: what the consumers acked (the `usage` queue's messages) and retried (both queues').
 */
export function holdUsageMessages() {
  const sent: Array<{ body: unknown; timestamp?: Date }> = [];
  const forwarded = new Map<string, Array<{ body: unknown }>>();
  const hold = (queue: Queue, into: (messages: Array<{ body: unknown }>) => void) =>
    vi.spyOn(queue, "sendBatch").mockImplementation(async (messages) => {
      into(messages as Array<{ body: unknown }>);
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } } as QueueSendBatchResponse;
    });
  hold(env.USAGE_QUEUE, (messages) => sent.push(...messages.map((m) => ({ body: m.body, timestamp: new Date() }))));
  for (const [index, queue] of usageShards(env).entries()) {
    hold(queue, (messages) => {
      const name = `usage-accounts-${index}`;
      forwarded.set(name, [...(forwarded.get(name) ?? []), ...messages]);
    });
  }
  const deliverTo = async (queue: string, messages: Array<{ body: unknown; timestamp?: Date }>) => {
    const batch = createMessageBatch(
      queue,
      messages.map((message, index) => ({
        id: `m${index}`,
        timestamp: message.timestamp ?? new Date(),
        attempts: 1,
        body: message.body,
      })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    return getQueueResult(batch, ctx);
  };
  const deliver = async () => {
    for (const message of sent) message.timestamp ??= new Date();
    const routed = await deliverTo("usage", sent);
    const shards = [...forwarded];
    forwarded.clear();
    const applied = await Promise.all(shards.map(([queue, messages]) => deliverTo(queue, messages)));
    return {
      ...routed,
      retryMessages: [...routed.retryMessages, ...applied.flatMap((result) => result.retryMessages)],
    };
  };
  return { sent, deliver, deliverTo };
}

/**
 * Makes the next usage post a copy racing the first post of its batch: its ledger shard recalls nothing (the first
 * post has not recorded the batch yet), so it enqueues the batch's parts again.
 */
export function raceTheFirstPost(): void {
  vi.spyOn(UsageBatchLedgerClient.prototype, "recall").mockResolvedValueOnce(null);
}

/** The usage parts of messages as sent, without the time each post stamped them with. */
export async function sentParts(messages: Array<{ body: unknown }>): Promise<unknown[]> {
  return (await Promise.all(messages.map((message) => usageMessageBody(message.body)))).flatMap((body) => body.parts);
}

/** A usage message's content as sent (gzipped JSON). */
export async function usageMessageBody(body: unknown): Promise<any> {
  return JSON.parse(await gunzipText(body as Uint8Array));
}

/**
 * Hands the account's metered usage to D1 now, as its traffic stores ask a minute after usage stops arriving (at
 * once when a pool or cap passes a threshold): pools, monthly usage and threshold events show settled figures.
 */
export async function settleUsage(account: { id: string }): Promise<void> {
  const ctx = domainContext(env);
  const shards = await trafficShards(ctx, account.id);
  for (let shard = 0; shard < shards; shard++) await settleAccountUsage(ctx, account.id, shard);
}

/** `read`, after settling the account's metered usage: for polls of the figures D1 holds (balance, months). */
export function settledFirst<T>(account: { id: string }, read: () => Promise<T>): () => Promise<T> {
  return async () => {
    await settleUsage(account);
    return read();
  };
}

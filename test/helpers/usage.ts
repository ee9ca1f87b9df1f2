import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { vi } from "vitest";
import { domainContext } from "../../src/domain/context";
import { settleAccountUsage } from "../../src/domain/traffic/apply-usage";
import worker from "../../src/index";
import type { TestAccount } from "./accounts";
import { call, env, gateway, json } from "./http";

let counter = 0;

export type RecordFields = Record<string, unknown>;

/** A usage record as the gateway reports it; every field can be overridden. */
export function usageRecord(username: string, fields: RecordFields = {}): RecordFields {
  counter++;
  return {
    request_id: `req_test${Date.now().toString(36)}${counter}`,
    ts: new Date().toISOString(),
    product: "residential",
    username,
    dest_ip: null,
    method: "GET",
    target_host: "example.com",
    status: 200,
    bytes_in: 1000,
    bytes_out: 100,
    exit_ip: "203.0.113.5",
    exit_geo: "us/ca/la",
    exit_asn: 7922,
    carrier_name: null,
    tag: null,
    error_code: null,
    repinned: false,
    client_ip: "198.51.100.23",
    ...fields,
  };
}

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
 * Holds the usage queue's messages instead of letting the broker deliver them (as if the consumer were behind),
 * so a test can deliver them by hand, as often as it likes, and read what the consumer acked or retried.
 */
export function holdUsageMessages() {
  const sent: Array<{ body: unknown }> = [];
  vi.spyOn(env.USAGE_QUEUE, "sendBatch").mockImplementation(async (messages) => {
    sent.push(...(messages as Array<{ body: unknown }>));
    return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } } as QueueSendBatchResponse;
  });
  const deliver = async () => {
    const batch = createMessageBatch(
      "usage",
      sent.map((message, index) => ({ id: `m${index}`, timestamp: new Date(), attempts: 1, body: message.body })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    return getQueueResult(batch, ctx);
  };
  return { sent, deliver };
}

/**
 * Hands the account's metered usage to D1 now, as its traffic store asks a minute after usage stops arriving (at
 * once when a pool or cap passes a threshold): pools, monthly usage and threshold events show settled figures.
 */
export async function settleUsage(account: { id: string }): Promise<void> {
  await settleAccountUsage(domainContext(env), account.id);
}

/** `read`, after settling the account's metered usage: for polls of the figures D1 holds (balance, months). */
export function settledFirst<T>(account: { id: string }, read: () => Promise<T>): () => Promise<T> {
  return async () => {
    await settleUsage(account);
    return read();
  };
}

import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { vi } from "vitest";
import worker from "../../src/index";
import type { TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, env, json } from "../helpers/http";
import { eventually } from "../helpers/usage";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** A fresh receiver URL (test/outbound/receiver.ts); `path` may carry instructions (`/status/500`). */
export function receiverUrl(path = "/hook"): string {
  return `https://${crypto.randomUUID()}.receiver.test${path}`;
}

/** What the receiver behind `url` got so far, oldest first. */
export async function received(url: string): Promise<ReceivedRequest[]> {
  return json(await fetch(`${new URL(url).origin}/__received`));
}

/** Waits until the receiver behind `url` got at least `count` requests, and returns them. */
export function receivedAtLeast(url: string, count: number): Promise<ReceivedRequest[]> {
  return eventually(
    () => received(url),
    (list) => list.length >= count,
  );
}

/** The receiver's next answers, in order. */
export async function script(url: string, answers: Array<{ status: number; headers?: Record<string, string> }>) {
  await fetch(`${new URL(url).origin}/__script`, { method: "POST", body: JSON.stringify(answers) });
}

export async function createEndpoint(
  account: TestAccount,
  body: { url?: string; events?: string[]; description?: string } = {},
): Promise<Record<string, any>> {
  const response = await call("POST", "/v1/webhook-endpoints", {
    token: account.token,
    body: { url: receiverUrl(), events: ["*"], ...body },
  });
  if (response.status !== 201) throw new Error(`endpoint creation failed: ${response.status} ${await response.text()}`);
  return json(response);
}

export async function deliveries(account: TestAccount, endpointId: string): Promise<Array<Record<string, any>>> {
  const response = await call("GET", `/v1/webhook-endpoints/${endpointId}/deliveries`, { token: account.token });
  if (response.status !== 200) throw new Error(`deliveries: ${response.status} ${await response.text()}`);
  return (await json(response)).data;
}

/** Waits until the endpoint's newest delivery matches `holds`. */
export function deliveryWhen(
  account: TestAccount,
  endpointId: string,
  holds: (delivery: Record<string, any>) => boolean,
): Promise<Record<string, any>> {
  return eventually(
    async () => (await deliveries(account, endpointId))[0] ?? {},
    (delivery) => delivery.id !== undefined && holds(delivery),
  );
}

/** A bandwidth order: records `order.completed` in the order's own batch. */
export async function orderBandwidth(account: TestAccount, gb = 1): Promise<Record<string, any>> {
  const response = await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb } });
  if (response.status !== 201) throw new Error(`order failed: ${response.status} ${await response.text()}`);
  return json(response);
}

export { eventually, runCron };

/**
 * Holds the `webhooks` queue's messages instead of letting the broker deliver them, so a test can deliver them
 * by hand, as often as it likes (a duplicate delivery by the platform). `failNextSend` makes the next send throw.
 */
export function holdWebhookMessages() {
  const sent: Array<{ body: unknown }> = [];
  let failures = 0;
  vi.spyOn(env.WEBHOOK_QUEUE, "sendBatch").mockImplementation(async (messages) => {
    if (failures > 0) {
      failures--;
      throw new Error("queue unavailable");
    }
    sent.push(...(messages as Array<{ body: unknown }>));
    return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } } as QueueSendBatchResponse;
  });
  const deliver = async (messages = sent) => {
    const batch = createMessageBatch(
      "webhooks",
      messages.map((message, index) => ({ id: `w${index}`, timestamp: new Date(), attempts: 1, body: message.body })),
    );
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    return getQueueResult(batch, ctx);
  };
  /** The messages handed over for one endpoint (the cron is global: other tests' deliveries may come due too). */
  const sentFor = (endpointId: string) =>
    sent.filter((message) => (message.body as { endpointId: string }).endpointId === endpointId);
  return {
    sent,
    sentFor,
    deliver,
    failNextSend: () => {
      failures++;
    },
  };
}

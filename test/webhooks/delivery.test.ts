import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { domainContext } from "../../src/domain/context";
import { fanOutEvents } from "../../src/domain/webhooks/dispatch";
import { createAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { orderBatch } from "../helpers/isp";
import {
  createEndpoint,
  deliveries,
  deliveryWhen,
  eventually,
  holdWebhookMessages,
  orderBandwidth,
  received,
  receivedAtLeast,
  receiverUrl,
  runCron,
  script,
} from "./helpers";

const T0 = Date.UTC(2026, 10, 2, 9, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();

/** Moves the clock and runs the every-minute cron there. */
async function cronAt(ms: number) {
  vi.setSystemTime(ms);
  await runCron(ms);
}

async function endpointStatus(account: { token: string }, id: string) {
  return json(await call("GET", `/v1/webhook-endpoints/${id}`, { token: account.token }));
}

async function sendTest(account: { token: string }, id: string) {
  const response = await call("POST", `/v1/webhook-endpoints/${id}/test`, { token: account.token });
  expect(response.status).toBe(200);
  return json(response);
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("delivery of recorded events", { timeout: 30_000 }, () => {
  it("a bandwidth order's order.completed arrives at once, signed per Standard Webhooks, its body the event", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account, { events: ["order.completed"] });
    const order = await orderBandwidth(account);
    const [request] = await receivedAtLeast(endpoint.url, 1);
    expect(request?.method).toBe("POST");
    expect(request?.headers["content-type"]).toBe("application/json");
    const verified = new Webhook(endpoint.secret).verify(request!.body, request!.headers) as Record<string, any>;
    expect(verified).toMatchObject({ type: "order.completed", data: { order_id: order.id, product: "residential" } });
    const event = await json(await call("GET", `/v1/events/${verified.id}`, { token: account.token }));
    // The body is the event as GET /v1/events/{id} shows it, livemode included (a live account: true).
    expect(JSON.parse(request!.body)).toEqual({
      id: event.id,
      type: event.type,
      created_at: event.created_at,
      livemode: true,
      data: event.data,
    });
    expect(request?.headers["webhook-id"]).toBe(event.id);
    expect(request?.headers["webhook-timestamp"]).toBe(String(T0 / 1000));
    expect(new TextEncoder().encode(request!.body).length).toBeLessThan(20_000);
    const [delivery] = await deliveries(account, endpoint.id);
    expect(delivery).toMatchObject({
      event_id: event.id,
      event_type: "order.completed",
      status: "succeeded",
      attempt_count: 1,
      next_retry_at: null,
      last_attempt: { attempt: 1, trigger: "automatic", status_code: 200, error: null, attempted_at: iso(T0) },
    });
  });

  it("an ISP order's order.completed arrives when the cron completes provisioning", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const endpoint = await createEndpoint(account, { events: ["order.completed"] });
    const { orderId, batchId } = await orderBatch(account, { quantity: 5 });
    await eventually(
      async () => (await deliveries(account, endpoint.id)).length,
      (count) => count === 0,
    );
    expect(await received(endpoint.url)).toEqual([]);
    await cronAt(T0 + 3 * MINUTE);
    const [request] = await receivedAtLeast(endpoint.url, 1);
    const verified = new Webhook(endpoint.secret).verify(request!.body, request!.headers) as Record<string, any>;
    expect(verified).toMatchObject({ type: "order.completed", data: { order_id: orderId, batch_id: batchId } });
  });

  it("only enabled endpoints of the event's own account that subscribe to its type receive it", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const wanted = await createEndpoint(account, { events: ["order.completed"] });
    const everything = await createEndpoint(account, { events: ["*"] });
    const otherType = await createEndpoint(account, { events: ["isp_batch.expiring"] });
    const disabled = await createEndpoint(account, { events: ["*"] });
    await call("PATCH", `/v1/webhook-endpoints/${disabled.id}`, { token: account.token, body: { status: "disabled" } });
    const stranger = await createEndpoint(await createAccount(), { events: ["*"] });
    await orderBandwidth(account);
    await receivedAtLeast(wanted.url, 1);
    await receivedAtLeast(everything.url, 1);
    await cronAt(T0 + MINUTE);
    for (const endpoint of [otherType, disabled, stranger]) expect(await received(endpoint.url)).toEqual([]);
    expect(await deliveries(account, otherType.id)).toEqual([]);
    expect(await deliveries(account, disabled.id)).toEqual([]);
    expect(await received(wanted.url)).toHaveLength(1);
  });
});

describe("retries", { timeout: 30_000 }, () => {
  it("a 500 is retried 5 minutes after the first attempt with the same webhook-id, and a 2xx ends the schedule", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await script(endpoint.url, [{ status: 500 }]);
    await orderBandwidth(account);
    const failed = await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === 1);
    expect(failed).toMatchObject({
      status: "pending",
      next_retry_at: iso(T0 + 5 * MINUTE),
      last_attempt: { status_code: 500, error: "the endpoint answered 500" },
    });
    await cronAt(T0 + 4 * MINUTE);
    const early = await env.DB.prepare("SELECT queued_until FROM webhook_deliveries WHERE id = ?")
      .bind(failed.id)
      .first();
    expect(early?.queued_until).toBeNull();
    await cronAt(T0 + 5 * MINUTE);
    const done = await deliveryWhen(account, endpoint.id, (d) => d.status === "succeeded");
    expect(done.attempts.map((a: Record<string, any>) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    expect(done.next_retry_at).toBeNull();
    const [first, second] = await received(endpoint.url);
    expect(second?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(Number(second?.headers["webhook-timestamp"]) - Number(first?.headers["webhook-timestamp"])).toBe(300);
    expect(second?.body).toBe(first?.body);
    await cronAt(T0 + 3 * HOUR);
    expect(await received(endpoint.url)).toHaveLength(2);
  });

  it("Retry-After pushes the next retry later than the schedule", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await script(endpoint.url, [{ status: 503, headers: { "Retry-After": "3600" } }]);
    await orderBandwidth(account);
    const failed = await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === 1);
    expect(failed.next_retry_at).toBe(iso(T0 + HOUR));
  });

  it("after 3 failed retries over 24 hours the delivery fails, the endpoint is disabled and the account mailed once", async () => {
    const mail = vi.spyOn(env.EMAIL, "send").mockResolvedValue({ messageId: "m1" } as EmailSendResult);
    const account = await createAccount({ balance_usd: 100 });
    await call("PATCH", "/v1/users/me", { token: account.token, body: { notification_email: "ops@acme.example" } });
    const endpoint = await createEndpoint(account, { url: receiverUrl("/status/500") });
    await orderBandwidth(account);
    await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === 1);
    for (const [count, at] of [
      [2, T0 + 5 * MINUTE],
      [3, T0 + 2 * HOUR],
      [4, T0 + 24 * HOUR],
    ] as const) {
      await cronAt(at);
      await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === count);
    }
    const [delivery] = await deliveries(account, endpoint.id);
    expect(delivery).toMatchObject({ status: "failed", next_retry_at: null, attempt_count: 4 });
    expect(delivery?.attempts.map((a: Record<string, any>) => a.attempted_at)).toEqual(
      [T0, T0 + 5 * MINUTE, T0 + 2 * HOUR, T0 + 24 * HOUR].map(iso),
    );
    expect(await endpointStatus(account, endpoint.id)).toMatchObject({
      status: "disabled",
      disabled_reason: "failing",
    });
    expect(mail).toHaveBeenCalledTimes(1);
    const message = mail.mock.calls[0]?.[0] as { to: string; text: string };
    expect(message.to).toBe("ops@acme.example");
    expect(message.text).toContain(endpoint.id);
    await orderBandwidth(account);
    await cronAt(T0 + 25 * HOUR);
    expect(await deliveries(account, endpoint.id)).toHaveLength(1);
    expect(await received(endpoint.url)).toHaveLength(4);
  });

  it("a 410 answer disables the endpoint at once (reason gone) and ends the delivery without retries", async () => {
    const mail = vi.spyOn(env.EMAIL, "send");
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account, { url: receiverUrl("/status/410") });
    await orderBandwidth(account);
    const delivery = await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === 1);
    expect(delivery).toMatchObject({ status: "failed", next_retry_at: null, last_attempt: { status_code: 410 } });
    expect(await endpointStatus(account, endpoint.id)).toMatchObject({ status: "disabled", disabled_reason: "gone" });
    await cronAt(T0 + 25 * HOUR);
    expect(await received(endpoint.url)).toHaveLength(1);
    expect(mail).not.toHaveBeenCalled();
  });

  it("a redirect is not followed: a 3xx is a failed attempt, retried on schedule", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account, { url: receiverUrl("/status/302") });
    await orderBandwidth(account);
    const delivery = await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === 1);
    expect(delivery).toMatchObject({ status: "pending", last_attempt: { status_code: 302 } });
    expect(delivery.last_attempt.error).toMatch(/redirect/);
  });
});

describe("secret rotation", { timeout: 30_000 }, () => {
  it("for 24 hours a delivery carries two signatures that both verify; afterwards only the new secret's", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account);
    const rotated = await json(
      await call("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { token: account.token }),
    );
    // Each delivery is verified at the time it arrives (the verifier refuses timestamps 5 minutes off).
    const deliverAt = async (ms: number) => {
      vi.setSystemTime(ms);
      await sendTest(account, endpoint.id);
      return (await received(endpoint.url)).at(-1)!;
    };
    for (const at of [T0, T0 + 24 * HOUR - 1000]) {
      const request = await deliverAt(at);
      expect(request.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
      expect(new Webhook(endpoint.secret).verify(request.body, request.headers)).toBeTruthy();
      expect(new Webhook(rotated.secret).verify(request.body, request.headers)).toBeTruthy();
    }
    const after = await deliverAt(T0 + 24 * HOUR);
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(new Webhook(rotated.secret).verify(after.body, after.headers)).toBeTruthy();
    expect(() => new Webhook(endpoint.secret).verify(after.body, after.headers)).toThrow();
  });
});

describe("POST /v1/webhook-endpoints/{id}/test", { timeout: 40_000 }, () => {
  it("sends a signed webhook.test to this endpoint alone and returns the attempt", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account, { events: ["order.completed"] });
    const bystander = await createEndpoint(account, { events: ["*"] });
    const delivery = await sendTest(account, endpoint.id);
    expect(delivery).toMatchObject({
      id: expect.stringMatching(/^whd_/),
      event_type: "webhook.test",
      status: "succeeded",
      last_attempt: { attempt: 1, trigger: "test", status_code: 200, error: null },
    });
    const [request] = await received(endpoint.url);
    const verified = new Webhook(endpoint.secret).verify(request!.body, request!.headers) as Record<string, any>;
    expect(verified).toMatchObject({ id: delivery.event_id, type: "webhook.test", data: { endpoint_id: endpoint.id } });
    await cronAt(T0 + MINUTE);
    expect(await received(bystander.url)).toEqual([]);
  });

  it("a failing receiver is still a 200 carrying the failed attempt, which is not retried", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account, { url: receiverUrl("/status/500") });
    const delivery = await sendTest(account, endpoint.id);
    expect(delivery).toMatchObject({
      status: "failed",
      next_retry_at: null,
      last_attempt: { status_code: 500, error: "the endpoint answered 500" },
    });
    await cronAt(T0 + 25 * HOUR);
    expect(await received(endpoint.url)).toHaveLength(1);
  });

  it("an unreachable receiver is a 200 with the connection error", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account, { url: "https://hooks.example.com/unreachable" });
    const delivery = await sendTest(account, endpoint.id);
    expect(delivery.last_attempt).toMatchObject({ status_code: 599 });
  });

  it("an answer slower than 15 seconds is a failed attempt with a timeout", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account, { url: receiverUrl("/delay/16000") });
    const delivery = await sendTest(account, endpoint.id);
    expect(delivery.last_attempt).toMatchObject({ status_code: null, error: "no answer within 15 s" });
  });
});

describe("POST …/deliveries/{delivery_id}/retry", { timeout: 30_000 }, () => {
  it("sends the delivery again now; a 2xx ends the schedule, so the automatic retry never comes", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await script(endpoint.url, [{ status: 500 }]);
    await orderBandwidth(account);
    const failed = await deliveryWhen(account, endpoint.id, (d) => d.attempt_count === 1);
    const response = await call("POST", `/v1/webhook-endpoints/${endpoint.id}/deliveries/${failed.id}/retry`, {
      token: account.token,
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      id: failed.id,
      status: "succeeded",
      attempt_count: 2,
      next_retry_at: null,
      last_attempt: { attempt: 2, trigger: "manual", status_code: 200 },
    });
    await cronAt(T0 + 6 * MINUTE);
    const requests = await received(endpoint.url);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.headers["webhook-id"]).toBe(failed.event_id);
  });

  it("answers 404 for another endpoint's delivery and 409 while an attempt is in flight", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account);
    const other = await createEndpoint(account);
    const delivery = await sendTest(account, endpoint.id);
    const retry = (endpointId: string, deliveryId = delivery.id) =>
      call("POST", `/v1/webhook-endpoints/${endpointId}/deliveries/${deliveryId}/retry`, { token: account.token });
    for (const response of [await retry(other.id), await retry(endpoint.id, "whd_00000000000000000000000000")]) {
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("webhook_delivery_not_found");
    }
    await env.DB.prepare("UPDATE webhook_deliveries SET claimed_until = ? WHERE id = ?")
      .bind(T0 + MINUTE, delivery.id)
      .run();
    const busy = await retry(endpoint.id);
    expect(busy.status).toBe(409);
    expect((await json(busy)).code).toBe("delivery_in_progress");
  });
});

describe("at-least-once platform, each attempt once", { timeout: 30_000 }, () => {
  it("a duplicated queue message never sends the same attempt twice", async () => {
    const queue = holdWebhookMessages();
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await orderBandwidth(account);
    await eventually(
      async () => queue.sent.length,
      (count) => count === 1,
    );
    const message = queue.sent[0] as { body: unknown };
    const first = await queue.deliver([message, message]);
    expect(first.explicitAcks).toHaveLength(2);
    await queue.deliver([message]);
    await cronAt(T0 + MINUTE);
    expect(await received(endpoint.url)).toHaveLength(1);
    expect(queue.sentFor(endpoint.id)).toHaveLength(1);
  });

  it("fanning the same event out twice (racing dispatchers) creates its delivery once", async () => {
    const queue = holdWebhookMessages();
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await orderBandwidth(account);
    await eventually(
      async () => queue.sent.length,
      (count) => count === 1,
    );
    await env.DB.prepare("UPDATE events SET delivered_at = NULL WHERE account_id = ?").bind(account.id).run();
    const ctx = domainContext(env);
    expect(await Promise.all([fanOutEvents(ctx, T0, account.id), fanOutEvents(ctx, T0, account.id)])).toContain(1);
    expect(await deliveries(account, endpoint.id)).toHaveLength(1);
    const pending = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM events WHERE delivered_at IS NULL AND account_id = ?",
    )
      .bind(account.id)
      .first();
    expect(pending?.n).toBe(0);
  });

  it("a delivery whose hand-over to the queue failed is handed over again once its lease ends", async () => {
    const queue = holdWebhookMessages();
    queue.failNextSend();
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await orderBandwidth(account);
    await eventually(
      async () => (await deliveries(account, endpoint.id)).length,
      (count) => count === 1,
    );
    await cronAt(T0 + 4 * MINUTE);
    expect(queue.sentFor(endpoint.id)).toHaveLength(0);
    await cronAt(T0 + 5 * MINUTE);
    expect(queue.sentFor(endpoint.id)).toHaveLength(1);
    await queue.deliver(queue.sentFor(endpoint.id));
    expect(await received(endpoint.url)).toHaveLength(1);
  });

  it("deleting or disabling an endpoint: its queued deliveries send nothing", async () => {
    const queue = holdWebhookMessages();
    const account = await createAccount({ balance_usd: 100 });
    const deleted = await createEndpoint(account);
    const disabled = await createEndpoint(account);
    await orderBandwidth(account);
    await eventually(
      async () => queue.sent.length,
      (count) => count === 2,
    );
    await call("DELETE", `/v1/webhook-endpoints/${deleted.id}`, { token: account.token });
    await call("PATCH", `/v1/webhook-endpoints/${disabled.id}`, { token: account.token, body: { status: "disabled" } });
    const result = await queue.deliver();
    expect(result.explicitAcks).toHaveLength(2);
    expect(await received(deleted.url)).toEqual([]);
    expect(await received(disabled.url)).toEqual([]);
    expect(await deliveries(account, disabled.id)).toMatchObject([{ status: "failed", attempt_count: 0 }]);
  });
});

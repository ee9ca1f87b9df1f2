import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, issueKey } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createEndpoint, deliveries, deliveryWhen, orderBandwidth } from "./helpers";

afterEach(() => {
  vi.useRealTimers();
});

async function listEvents(token: string, query = "") {
  const response = await call("GET", `/v1/events${query}`, { token });
  expect(response.status).toBe(200);
  return json(response);
}

describe("GET /v1/events and /v1/events/{id}", () => {
  it("lists the account's events newest first as {id, type, created_at, livemode, data}, on every plan", async () => {
    const account = await createAccount({ plan: "trial", balance_usd: 100 });
    const first = await orderBandwidth(account);
    const second = await orderBandwidth(account);
    const { data, next_cursor } = await listEvents(account.token);
    expect(next_cursor).toBeNull();
    expect(data).toHaveLength(2);
    expect(data.map((event: Record<string, any>) => event.data.order_id)).toEqual([second.id, first.id]);
    expect(data[0]).toMatchObject({
      id: expect.stringMatching(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/),
      type: "order.completed",
      created_at: second.created_at,
      livemode: true,
      data: { order_id: second.id, product: "residential", total_usd: second.total_usd },
    });
    // Each listed event carries livemode itself (the page's own livemode is beside `data`): a live key, true.
    expect(Object.keys(data[0])).toEqual(["id", "type", "created_at", "livemode", "data"]);
    const one = await call("GET", `/v1/events/${data[0].id}`, { token: account.token });
    expect(await json(one)).toMatchObject(data[0]);
  });

  it("filters by type, refuses unknown types with 422, and pages with a cursor", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const endpoint = await createEndpoint(account);
    await call("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { token: account.token });
    await orderBandwidth(account);
    await orderBandwidth(account);
    const tests = await listEvents(account.token, "?type=webhook.test");
    expect(tests.data.map((event: Record<string, any>) => event.type)).toEqual(["webhook.test"]);
    expect(tests.data[0].data).toMatchObject({ endpoint_id: endpoint.id });
    const orders = await listEvents(account.token, "?type=order.completed&limit=1");
    expect(orders.data).toHaveLength(1);
    const rest = await listEvents(account.token, `?type=order.completed&limit=1&cursor=${orders.next_cursor}`);
    expect(rest.data).toHaveLength(1);
    expect(rest.data[0].id < orders.data[0].id).toBe(true);
    const unknown = await call("GET", "/v1/events?type=order.created", { token: account.token });
    expect(unknown.status).toBe(422);
    expect((await json(unknown)).code).toBe("invalid_request");
  });

  it("another account's event, an unknown id and a malformed id all answer 404 event_not_found", async () => {
    const owner = await createAccount({ balance_usd: 100 });
    await orderBandwidth(owner);
    const [event] = (await listEvents(owner.token)).data;
    const stranger = await createAccount();
    expect((await listEvents(stranger.token)).data).toEqual([]);
    for (const id of [event.id, "evt_00000000000000000000000000", "nope"]) {
      const response = await call("GET", `/v1/events/${id}`, { token: stranger.token });
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("event_not_found");
    }
  });

  it("shows 30 days of events: older ones leave the list and answer 404", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    const account = await createAccount({ balance_usd: 100 });
    await orderBandwidth(account);
    const [event] = (await listEvents(account.token)).data;
    vi.setSystemTime(start + 30 * 86_400_000 - 60_000);
    expect((await listEvents(account.token)).data).toHaveLength(1);
    vi.setSystemTime(start + 30 * 86_400_000 + 60_000);
    expect((await listEvents(account.token)).data).toEqual([]);
    expect((await call("GET", `/v1/events/${event.id}`, { token: account.token })).status).toBe(404);
  });

  it("a product-scoped key may not read events (403 subuser_scope_mismatch): they cover every product", async () => {
    const account = await createAccount();
    const scoped = await issueKey(account.id, ["residential"]);
    for (const path of ["/v1/events", "/v1/events/evt_00000000000000000000000000"]) {
      const response = await call("GET", path, { token: scoped.token });
      expect(response.status).toBe(403);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    }
  });
});

describe("the OpenAPI document's webhooks section", () => {
  it("documents every event type's payload with the Standard Webhooks headers", async () => {
    const document = await json(await call("GET", "/v1/openapi.json"));
    const types = [
      "order.completed",
      "isp_batch.expiring",
      "traffic.threshold",
      "report_run.completed",
      "report_run.failed",
      "subuser.new_source",
      "subuser.traffic_spike",
      "subuser.traffic_spike_ended",
      "subuser.expired",
      "webhook.test",
      "budget.threshold",
      "balance.low",
    ];
    expect(Object.keys(document.webhooks).sort()).toEqual([...types].sort());
    for (const type of types) {
      const operation = document.webhooks[type].post;
      const headers = operation.parameters.map((p: { name: string }) => p.name);
      expect(headers).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
      expect(operation.requestBody.content["application/json"].schema.$ref).toMatch(/Event$/);
    }
    expect(document.components.schemas.OrderCompletedData.required).toEqual(["order_id", "product", "total_usd"]);
    // Every delivered body carries livemode, so the documented event (each webhook's body) requires it.
    const eventSchema = document.components.schemas.Event;
    expect(eventSchema.required).toEqual(["id", "type", "created_at", "livemode", "data"]);
    expect(eventSchema.properties.livemode.type).toBe("boolean");
  });
});

describe("events wait for the endpoints that await them", () => {
  async function deliveredAt(accountId: string): Promise<Array<number | null>> {
    const { results } = await env.DB.prepare("SELECT delivered_at FROM events WHERE account_id = ? ORDER BY id")
      .bind(accountId)
      .all<{ delivered_at: number | null }>();
    return results.map((row) => row.delivered_at);
  }

  it("an event no enabled endpoint subscribes to is recorded as dispatched: no fan-out, no delivery, still listed", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const other = await createEndpoint(account, { events: ["report_run.completed"] });
    await orderBandwidth(account);
    const [dispatched] = await deliveredAt(account.id);
    expect(dispatched).toEqual(expect.any(Number));
    expect(await deliveries(account, other.id)).toEqual([]);
    expect((await listEvents(account.token)).data.map((event: Record<string, any>) => event.type)).toEqual([
      "order.completed",
    ]);
  });

  it("an event an endpoint subscribes to waits for the fan-out and is delivered; an endpoint enabled later gets only later events", async () => {
    const account = await createAccount({ balance_usd: 100 });
    await orderBandwidth(account);
    const endpoint = await createEndpoint(account, { events: ["order.completed"] });
    const awaited = await orderBandwidth(account);
    const delivery = await deliveryWhen(account, endpoint.id, () => true);
    expect(delivery).toMatchObject({ event_type: "order.completed" });
    const all = await deliveries(account, endpoint.id);
    expect(all).toHaveLength(1);
    const [event] = (await listEvents(account.token, "?limit=1")).data;
    expect(event.data.order_id).toBe(awaited.id);
    expect(all[0]?.event_id).toBe(event.id);
  });
});

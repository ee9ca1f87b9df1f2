import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { sandboxOf } from "../helpers/sandbox";
import { createSubuser, username } from "../helpers/subusers";
import { createEndpoint, orderBandwidth, received, receivedAtLeast } from "../webhooks/helpers";

const post = (account: TestAccount, path: string, body?: unknown) =>
  call("POST", `/v1${path}`, { token: account.token, body });

async function sandboxWithBandwidth(): Promise<TestAccount> {
  const sandbox = await sandboxOf(await createAccount());
  expect((await post(sandbox, "/orders", { product: "residential", gb: 1 })).status).toBe(201);
  return sandbox;
}

describe("POST /tools/proxy-test in the sandbox", () => {
  it("answers with a simulated, deterministic exit, without connecting to any gateway", async () => {
    const sandbox = await sandboxWithBandwidth();
    const subuser = await createSubuser(sandbox);
    const body = { username: username(subuser.name, "type-res-region-de-state-be"), password: subuser.password };
    const first = await json(await post(sandbox, "/tools/proxy-test", body));
    expect(first).toMatchObject({
      auth_ok: true,
      status: 200,
      exit_geo: { country: "de", state: "be", city: null },
      exit_asn: 64496,
      latency_ms: { connect: 12, tls: null, ttfb: 35, total: 47 },
      parsed: { subuser: subuser.id, region: "de", state: "be" },
      livemode: false,
    });
    expect(first.exit_ip).toMatch(/^203\.0\.113\./);
    const second = await json(await post(sandbox, "/tools/proxy-test", body));
    expect(second.exit_ip).toBe(first.exit_ip);
  });

  it("refuses like the gateway: 407 wrong password (auth_ok false), 403 disabled, 402 without bandwidth", async () => {
    const sandbox = await sandboxWithBandwidth();
    const subuser = await createSubuser(sandbox);
    const wrong = await json(
      await post(sandbox, "/tools/proxy-test", { username: username(subuser.name), password: "x".repeat(32) }),
    );
    expect(wrong).toMatchObject({ auth_ok: false, status: 407, error_code: "auth-failed", exit_ip: null });
    await call("PATCH", `/v1/subusers/${subuser.id}`, { token: sandbox.token, body: { status: "disabled" } });
    const disabled = await json(
      await post(sandbox, "/tools/proxy-test", { username: username(subuser.name), password: subuser.password }),
    );
    expect(disabled).toMatchObject({ status: 403, error_code: "subuser-disabled" });
    const mobile = await createSubuser(sandbox, { products: ["mobile"] });
    const exhausted = await json(
      await post(sandbox, "/tools/proxy-test", {
        username: username(mobile.name, "type-mob-region-us"),
        password: mobile.password,
      }),
    );
    expect(exhausted).toMatchObject({ status: 402, error_code: "bandwidth-exhausted" });
  });
});

describe("events and webhooks are per mode", () => {
  it("a sandbox order's event is listed and delivered only in the sandbox, a live one only live", async () => {
    const live = await createAccount({ balance_usd: 100 });
    const sandbox = await sandboxOf(live);
    const liveEndpoint = await createEndpoint(live, { events: ["order.completed"] });
    const sandboxEndpoint = await createEndpoint(sandbox, { events: ["order.completed"] });
    expect(sandboxEndpoint.livemode).toBe(false);

    const sandboxOrder = await orderBandwidth(sandbox);
    const events = async (account: TestAccount) =>
      JSON.stringify((await json(await call("GET", "/v1/events", { token: account.token }))).data);
    expect(await events(sandbox)).toContain(sandboxOrder.id);
    expect(await events(live)).not.toContain(sandboxOrder.id);
    const [delivered] = await receivedAtLeast(sandboxEndpoint.url, 1);
    expect(delivered?.body).toContain(sandboxOrder.id);

    const liveOrder = await orderBandwidth(live);
    const [liveDelivered] = await receivedAtLeast(liveEndpoint.url, 1);
    expect(liveDelivered?.body).toContain(liveOrder.id);
    expect((await received(liveEndpoint.url)).map((request) => request.body).join()).not.toContain(sandboxOrder.id);
    expect((await received(sandboxEndpoint.url)).map((request) => request.body).join()).not.toContain(liveOrder.id);

    expect((await json(await call("GET", "/v1/webhook-endpoints", { token: live.token }))).data).toHaveLength(1);
    const crossed = await call("GET", `/v1/webhook-endpoints/${sandboxEndpoint.id}`, { token: live.token });
    expect(crossed.status).toBe(404);
  });

  it("a delivery's body carries livemode (false for a sandbox event, true for a live one), covered by its signature", async () => {
    const live = await createAccount({ balance_usd: 100 });
    const sandbox = await sandboxOf(live);
    const liveEndpoint = await createEndpoint(live, { events: ["order.completed"] });
    const sandboxEndpoint = await createEndpoint(sandbox, { events: ["order.completed"] });
    const sandboxOrder = await orderBandwidth(sandbox);
    const liveOrder = await orderBandwidth(live);
    const [sandboxDelivered] = await receivedAtLeast(sandboxEndpoint.url, 1);
    const [liveDelivered] = await receivedAtLeast(liveEndpoint.url, 1);

    // The signature verifies over the delivered bytes, livemode included.
    const sandboxBody = new Webhook(sandboxEndpoint.secret).verify(sandboxDelivered!.body, sandboxDelivered!.headers);
    const liveBody = new Webhook(liveEndpoint.secret).verify(liveDelivered!.body, liveDelivered!.headers);
    expect(sandboxBody).toMatchObject({
      type: "order.completed",
      livemode: false,
      data: { order_id: sandboxOrder.id },
    });
    expect(liveBody).toMatchObject({ type: "order.completed", livemode: true, data: { order_id: liveOrder.id } });

    // GET /v1/events/{id} answers the delivered bytes exactly, and the list shows each event with the same livemode.
    for (const [account, delivered] of [
      [sandbox, sandboxDelivered!],
      [live, liveDelivered!],
    ] as const) {
      const id = delivered.headers["webhook-id"];
      expect(await (await call("GET", `/v1/events/${id}`, { token: account.token })).text()).toBe(delivered.body);
      const listed = (await json(await call("GET", "/v1/events", { token: account.token }))).data;
      expect(listed).toContainEqual(JSON.parse(delivered.body));
    }

    // A requested test delivery is an event of the endpoint's account too: false in the sandbox.
    await call("POST", `/v1/webhook-endpoints/${sandboxEndpoint.id}/test`, { token: sandbox.token });
    const test = (await received(sandboxEndpoint.url)).find((request) => request.body.includes('"webhook.test"'));
    expect(new Webhook(sandboxEndpoint.secret).verify(test!.body, test!.headers)).toMatchObject({ livemode: false });
  });
});

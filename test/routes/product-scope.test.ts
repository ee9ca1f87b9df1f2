import { describe, expect, it } from "vitest";
import { createAccount, issueKey } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { orderBatch } from "../helpers/isp";

async function expectScopeMismatch(response: Response) {
  expect(response.status).toBe(403);
  expect((await json(response)).code).toBe("subuser_scope_mismatch");
}

describe("a key's product scope covers every resource of that product (spec §5.2)", () => {
  it("a residential-only key cannot read, change or pause an ISP subscription, and does not list it", async () => {
    const account = await createAccount({ balance_usd: 500 });
    const { batchId } = await orderBatch(account, { quantity: 5 });
    const subscription = await json(
      await call("POST", "/v1/subscriptions", {
        token: account.token,
        body: { product: "isp", batch_id: batchId, cycle: "monthly" },
      }),
    );
    expect(subscription.product).toBe("isp");
    const residential = await issueKey(account.id, ["residential"]);

    await expectScopeMismatch(await call("GET", `/v1/subscriptions/${subscription.id}`, { token: residential.token }));
    await expectScopeMismatch(
      await call("PATCH", `/v1/subscriptions/${subscription.id}`, {
        token: residential.token,
        body: { cycle: "annual" },
      }),
    );
    await expectScopeMismatch(
      await call("POST", `/v1/subscriptions/${subscription.id}/pause`, { token: residential.token }),
    );
    await expectScopeMismatch(
      await call("POST", `/v1/subscriptions/${subscription.id}/cancel`, { token: residential.token }),
    );
    await expectScopeMismatch(
      await call("POST", "/v1/subscriptions", {
        token: residential.token,
        body: { product: "isp", batch_id: batchId, cycle: "annual" },
      }),
    );
    const listed = await json(await call("GET", "/v1/subscriptions", { token: residential.token }));
    expect(listed.data).toEqual([]);
    // Unchanged by the refused calls.
    const after = await json(await call("GET", `/v1/subscriptions/${subscription.id}`, { token: account.token }));
    expect(after).toMatchObject({ status: "active", pending: { cycle: null } });
  });

  it("orders, pools and the ISP inventory follow the key's scope too", async () => {
    const account = await createAccount({ balance_usd: 500 });
    const { orderId } = await orderBatch(account, { quantity: 5 });
    const bandwidth = await json(
      await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb: 1 } }),
    );
    const residential = await issueKey(account.id, ["residential"]);

    await expectScopeMismatch(await call("GET", `/v1/orders/${orderId}`, { token: residential.token }));
    expect((await call("GET", `/v1/orders/${bandwidth.id}`, { token: residential.token })).status).toBe(200);
    const orders = await json(await call("GET", "/v1/orders", { token: residential.token }));
    expect(orders.data.map((order: { id: string }) => order.id)).toEqual([bandwidth.id]);

    await expectScopeMismatch(
      await call("POST", "/v1/orders", { token: residential.token, body: { product: "mobile", gb: 1 } }),
    );
    await expectScopeMismatch(await call("GET", "/v1/mobile/balance", { token: residential.token }));
    expect((await call("GET", "/v1/residential/balance", { token: residential.token })).status).toBe(200);
    await expectScopeMismatch(await call("GET", "/v1/isp/inventory", { token: residential.token }));
    await expectScopeMismatch(await call("GET", "/v1/isp/batches", { token: residential.token }));
  });

  it("another account's resources answer like missing ones, whatever the scope", async () => {
    const owner = await createAccount({ balance_usd: 500 });
    const { orderId, batchId } = await orderBatch(owner, { quantity: 5 });
    const stranger = await createAccount();
    expect((await call("GET", `/v1/orders/${orderId}`, { token: stranger.token })).status).toBe(404);
    expect((await call("GET", `/v1/isp/batches/${batchId}`, { token: stranger.token })).status).toBe(404);
  });
});

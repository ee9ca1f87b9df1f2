import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, json } from "../helpers/http";

async function expectInvalid(response: Response, field: string) {
  expect(response.status).toBe(422);
  const body = await json(response);
  expect(body.code).toBe("invalid_request");
  expect(body.details.map((d: { field: string }) => d.field)).toContain(field);
}

describe("amounts are representable at their stored unit and priced above zero", () => {
  it("a bandwidth order for less than 1 MB, or not a multiple of it, is 422 and charges nothing", async () => {
    const account = await createAccount({ balance_usd: 0 });
    for (const gb of [1e-308, 5e-324, 0.0005, 0.0015, 1.0001]) {
      await expectInvalid(
        await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb } }),
        "gb",
      );
    }
    expect((await json(await call("GET", "/v1/orders", { token: account.token }))).data).toEqual([]);
  });

  it("the smallest order (0.001 GB) costs at least a cent", async () => {
    const account = await createAccount({ balance_usd: 1 });
    const response = await call("POST", "/v1/orders", { token: account.token, body: { product: "mobile", gb: 0.001 } });
    expect(response.status).toBe(201);
    expect((await json(response)).total_usd).toBeGreaterThanOrEqual(0.01);
  });

  it("admin prices, credits, tiers and opening balances refuse amounts that round to nothing or to another cent", async () => {
    const account = await createAccount();
    for (const amount of [5e-324, 1e-308, 0.001, 1.005, 0]) {
      await expectInvalid(
        await admin("PUT", "/prices/bandwidth/mobile", { price_per_gb_usd: amount }),
        "price_per_gb_usd",
      );
      await expectInvalid(
        await admin("PUT", "/prices/isp/US/7922", { carrier: "Comcast", price_per_ip_month_usd: amount }),
        "price_per_ip_month_usd",
      );
      await expectInvalid(
        await admin("PUT", "/prices/tiers/mobile/pro", { gb_included: 250, monthly_price_usd: amount }),
        "monthly_price_usd",
      );
      await expectInvalid(
        await admin("PUT", `/accounts/${account.id}/custom-tiers/mobile`, {
          gb_included: 1,
          monthly_price_usd: amount,
        }),
        "monthly_price_usd",
      );
      await expectInvalid(await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: amount }), "amount_usd");
    }
    await expectInvalid(
      await admin("POST", "/accounts", { email: `tiny-${crypto.randomUUID()}@example.com`, balance_usd: 5e-324 }),
      "balance_usd",
    );
    // Mobile still costs what the catalogue says: 100 GB is never free.
    const catalogue = await json(await admin("GET", "/prices"));
    expect(catalogue.bandwidth.find((row: { product: string }) => row.product === "mobile").price_per_gb_usd).toBe(8);
  });

  it("accepts exact cents (0.07, 19.99) and stores them exactly", async () => {
    const account = await createAccount();
    const credited = await json(await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 0.07 }));
    expect(credited.balance.amount).toBe(0.07);
    const again = await json(await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 19.99 }));
    expect(again.balance.amount).toBe(20.06);
  });
});

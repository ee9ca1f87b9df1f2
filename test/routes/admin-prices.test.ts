import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, json } from "../helpers/http";

describe("admin API: price catalogue", () => {
  it("is seeded with the reference prices", async () => {
    const catalogue = await json(await admin("GET", "/prices"));
    expect(catalogue.bandwidth).toEqual(
      expect.arrayContaining([
        { product: "residential", price_per_gb_usd: 4.5 },
        { product: "mobile", price_per_gb_usd: 8 },
      ]),
    );
    expect(catalogue.tiers).toEqual(
      expect.arrayContaining([
        { product: "residential", plan: "starter", gb_included: 50, monthly_price_usd: 200 },
        { product: "residential", plan: "pro", gb_included: 500, monthly_price_usd: 1500 },
        { product: "residential", plan: "business", gb_included: 2000, monthly_price_usd: 5000 },
        { product: "mobile", plan: "starter", gb_included: 25, monthly_price_usd: 200 },
        { product: "mobile", plan: "pro", gb_included: 250, monthly_price_usd: 1500 },
        { product: "mobile", plan: "business", gb_included: 1000, monthly_price_usd: 5000 },
      ]),
    );
    expect(catalogue.isp.find((row: { asn: number }) => row.asn === 7018)).toMatchObject({
      premium: true,
      price_per_ip_month_usd: 7.2,
    });
  });

  it("edits take effect on the next order and subscription", async () => {
    await admin("PUT", "/prices/bandwidth/mobile", { price_per_gb_usd: 9.25 });
    await admin("PUT", "/prices/tiers/mobile/mega", { gb_included: 5000, monthly_price_usd: 9000 });
    await admin("PUT", "/prices/isp/PL/5617", { carrier: "Orange Polska", premium: true, price_per_ip_month_usd: 7 });
    const account = await createAccount({ balance_usd: 20000 });
    const order = await json(
      await call("POST", "/v1/orders", { token: account.token, body: { product: "mobile", gb: 2 } }),
    );
    expect(order).toMatchObject({ total_usd: 18.5, details: { price_per_gb: 9.25 } });
    const sub = await json(
      await call("POST", "/v1/subscriptions", {
        token: account.token,
        body: { product: "mobile", plan: "mega", cycle: "monthly" },
      }),
    );
    expect(sub).toMatchObject({ plan: "mega", gb_included: 5000, price_usd: 9000 });
    const inventory = await json(await call("GET", "/v1/isp/inventory?country=PL", { token: account.token }));
    expect(inventory.data[0]).toMatchObject({ premium: true, price_per_ip_month_usd: 7 });
    await admin("PUT", "/prices/bandwidth/mobile", { price_per_gb_usd: 8 });
  });

  it("validates prices and needs the admin token", async () => {
    expect((await admin("PUT", "/prices/bandwidth/mobile", { price_per_gb_usd: -1 })).status).toBe(422);
    expect((await admin("PUT", "/prices/bandwidth/isp", { price_per_gb_usd: 1 })).status).toBe(422);
    expect(
      (await admin("PUT", "/prices/tiers/residential/pro", { gb_included: 1.5, monthly_price_usd: 1 })).status,
    ).toBe(422);
    expect((await call("GET", "/internal/admin/prices")).status).toBe(401);
  });
});

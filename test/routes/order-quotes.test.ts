import { describe, expect, it } from "vitest";
import { buyBandwidth, createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { admin, call, json } from "../helpers/http";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, settleUsage, usageRecord } from "../helpers/usage";

const DAY = 86_400_000;

async function quote(account: { token: string }, body: Record<string, unknown>) {
  const response = await call("POST", "/v1/orders/quote", { token: account.token, body });
  return { status: response.status, body: await json(response) };
}

async function balanceOf(account: TestAccount): Promise<number> {
  return (await json(await call("GET", "/v1/users/me", { token: account.token }))).balance.amount;
}

async function orderCount(account: TestAccount): Promise<number> {
  return (await json(await call("GET", "/v1/orders", { token: account.token }))).data.length;
}

function ispBody(subuser: string, fields: Record<string, unknown> = {}) {
  return { product: "isp", country: "US", city: "newyork", asn: 7922, quantity: 10, months: 2, subuser, ...fields };
}

describe("POST /v1/orders/quote: what an order would cost and do, nothing charged or reserved", () => {
  it("prices a bandwidth order exactly as the order is charged, with its line item and the balance after", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const quoted = await quote(account, { product: "residential", gb: 2.5 });
    expect(quoted.status).toBe(200);
    expect(quoted.body).toMatchObject({
      product: "residential",
      line_items: [{ unit: "gb", quantity: 2.5, amount_usd: quoted.body.total_usd }],
      balance_usd: 100,
      orderable: true,
      error: null,
    });
    expect(quoted.body.balance_after_usd).toBeCloseTo(100 - quoted.body.total_usd, 2);
    // Nothing was charged or recorded by the quote.
    expect(await balanceOf(account)).toBe(100);
    expect(await orderCount(account)).toBe(0);
    const placed = await call("POST", "/v1/orders", {
      token: account.token,
      body: { product: "residential", gb: 2.5 },
    });
    expect((await json(placed)).total_usd).toBe(quoted.body.total_usd);
  });

  it("prices an ISP order (per IP and month) without reserving any IP", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const subuser = await createSubuser(account, { products: ["isp"] });
    const inventory = async () => {
      const response = await call("GET", "/v1/isp/inventory?country=US", { token: account.token });
      expect(response.status).toBe(200);
      return JSON.stringify(await json(response));
    };
    const before = await inventory();
    const quoted = await quote(account, ispBody(subuser.id));
    expect(quoted.status).toBe(200);
    const [line] = quoted.body.line_items;
    expect(line).toMatchObject({ unit: "ip_month", quantity: 20 });
    expect(quoted.body.total_usd).toBeCloseTo(line.unit_price_usd * 20, 2);
    expect(quoted.body.orderable).toBe(true);
    expect(await inventory()).toBe(before);
    expect(await orderCount(account)).toBe(0);
    const placed = await json(await call("POST", "/v1/orders", { token: account.token, body: ispBody(subuser.id) }));
    expect(placed.total_usd).toBe(quoted.body.total_usd);
  });

  it("reports the error the order would get: insufficient_balance with the balance after, and the order gets it too", async () => {
    const account = await createAccount({ balance_usd: 1 });
    const quoted = await quote(account, { product: "residential", gb: 10 });
    expect(quoted.body.orderable).toBe(false);
    expect(quoted.body.error).toMatchObject({ status: 409, code: "insufficient_balance" });
    expect(quoted.body.balance_after_usd).toBeLessThan(0);
    const placed = await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb: 10 } });
    expect(placed.status).toBe(409);
    expect((await json(placed)).code).toBe("insufficient_balance");
  });

  it("reports kyc_required for an account under risk review, and insufficient_inventory (unpriced) for an ASN not offered", async () => {
    const account = await createAccount({ balance_usd: 100 });
    await admin("PATCH", `/accounts/${account.id}`, { risk_review: true });
    const kyc = await quote(account, { product: "residential", gb: 1 });
    expect(kyc.body.error).toMatchObject({ status: 409, code: "kyc_required" });
    expect(kyc.body.total_usd).toEqual(expect.any(Number));

    const other = await createAccount({ balance_usd: 100 });
    const subuser = await createSubuser(other, { products: ["isp"] });
    const unpriced = await quote(other, ispBody(subuser.id, { asn: 64512, city: null }));
    expect(unpriced.body).toMatchObject({ total_usd: null, line_items: [], balance_after_usd: null, orderable: false });
    expect(unpriced.body.error).toMatchObject({ status: 422, code: "insufficient_inventory" });
  });

  it("answers another account's sub-user as the order does (subuser_not_found), and a key's product scope as the order does", async () => {
    const owner = await createAccount({ balance_usd: 100 });
    const stranger = await createAccount({ balance_usd: 100 });
    const subuser = await createSubuser(owner, { products: ["isp"] });
    const crossed = await quote(stranger, ispBody(subuser.id));
    expect(crossed.body.error).toMatchObject({ status: 404, code: "subuser_not_found" });

    const mobileOnly = await issueKey(owner.id, ["mobile"]);
    const scoped = await quote(mobileOnly, { product: "residential", gb: 1 });
    const placed = await call("POST", "/v1/orders", {
      token: mobileOnly.token,
      body: { product: "residential", gb: 1 },
    });
    expect(scoped.body.error).toMatchObject({ status: placed.status, code: (await json(placed)).code });
  });

  it("refuses a body that is not a valid order with 422, as the order would", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const bad = await quote(account, { product: "residential", gb: -1 });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("invalid_request");
    const tooFew = await quote(account, ispBody("sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", { quantity: 2 }));
    expect(tooFew.status).toBe(422);
    expect(tooFew.body.code).toBe("quantity_out_of_range");
  });
});

describe("GET /v1/{product}/balance: forecast", () => {
  it("has no projection while nothing was used: average 0, projected_exhaustion_at null", async () => {
    const account = await createAccount({ balance_usd: 100 });
    await buyBandwidth(account, 1);
    const balance = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(balance.forecast).toMatchObject({ window_days: 7, avg_daily_gb: 0, projected_exhaustion_at: null });
  });

  it("averages the last 7 days' exact usage and projects the day the pool runs out at that pace", async () => {
    const account = await createAccount({ balance_usd: 100 });
    await buyBandwidth(account, 1);
    const subuser = await createSubuser(account);
    const records = Array.from({ length: 10 }, () =>
      usageRecord(username(subuser.name), { bytes_in: 9_000_000, bytes_out: 1_000_000 }),
    );
    await reportUsage(records);
    await settleUsage(account);
    const balance = await eventually(
      async () => json(await call("GET", "/v1/residential/balance", { token: account.token })),
      (body) => body.gb_used === 0.1 && body.forecast.avg_daily_gb > 0,
    );
    const { from, to, avg_daily_gb, projected_exhaustion_at } = balance.forecast;
    const days = (Date.parse(to) - Date.parse(from)) / DAY;
    expect(days).toBeGreaterThanOrEqual(7);
    expect(avg_daily_gb).toBeCloseTo(0.1 / days, 9);
    const expected = Date.now() + (0.9 / avg_daily_gb) * DAY;
    expect(Math.abs(Date.parse(projected_exhaustion_at) - expected)).toBeLessThan(60_000);
  });
});

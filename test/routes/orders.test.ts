import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, env, json } from "../helpers/http";
import { createSubuser } from "../helpers/subusers";

async function ledgerSum(accountId: string): Promise<number> {
  const row = await env.DB.prepare(
    "SELECT COALESCE(SUM(amount_minor), 0) AS total FROM ledger_entries WHERE account_id = ?",
  )
    .bind(accountId)
    .first<{ total: number }>();
  return row?.total ?? 0;
}

async function balanceMinor(accountId: string): Promise<number> {
  const row = await env.DB.prepare("SELECT balance_minor FROM accounts WHERE id = ?")
    .bind(accountId)
    .first<{ balance_minor: number }>();
  return row?.balance_minor ?? -1;
}

function order(token: string, body: unknown, key?: string) {
  return call("POST", "/v1/orders", { token, body, headers: key ? { "Idempotency-Key": key } : {} });
}

describe("bandwidth orders (spec §2.4, §3.1, §4.3)", () => {
  it("prices from the catalogue, debits at once, completes, and fills the product's pool", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const response = await order(account.token, { product: "residential", gb: 10 });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toMatchObject({
      product: "residential",
      status: "completed",
      total_usd: 45,
      details: { gb: 10, price_per_gb: 4.5 },
    });
    expect(body.id).toMatch(/^ord_/);
    expect((await json(await call("GET", "/v1/users/me", { token: account.token }))).balance.amount).toBe(55);
    const pool = await json(await call("GET", "/v1/residential/balance", { token: account.token }));
    expect(pool).toEqual({
      product: "residential",
      gb_purchased: 10,
      gb_used: 0,
      gb_remaining: 10,
      gb_overdrawn: 0,
      exhausted: false,
      forecast: expect.objectContaining({ window_days: 7, avg_daily_gb: 0, projected_exhaustion_at: null }),
      livemode: true,
    });
    expect((await json(await call("GET", "/v1/mobile/balance", { token: account.token }))).gb_remaining).toBe(0);
    const event = await env.DB.prepare("SELECT type, payload FROM events WHERE account_id = ?")
      .bind(account.id)
      .first();
    expect(event?.type).toBe("order.completed");
    expect(JSON.parse(event?.payload as string)).toEqual({ order_id: body.id, product: "residential", total_usd: 45 });
  });

  it("prices mobile at 8.00/GB and accepts 3 decimals, rounding the total up to the cent", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const body = await json(await order(account.token, { product: "mobile", gb: 1.001 }));
    expect(body.total_usd).toBe(8.01);
    expect(body.details).toEqual({ gb: 1.001, price_per_gb: 8 });
    expect((await json(await call("GET", "/v1/mobile/balance", { token: account.token }))).gb_remaining).toBe(1.001);
  });

  it.each([
    [{ product: "residential", gb: 0 }],
    [{ product: "residential", gb: -1 }],
    [{ product: "residential", gb: 1.0001 }],
    [{ product: "datacenter", gb: 1 }],
    [{ product: "residential" }],
  ])("rejects %j with 422 invalid_request", async (body) => {
    const account = await createAccount({ balance_usd: 100 });
    const response = await order(account.token, body);
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe("invalid_request");
  });

  it("answers 409 insufficient_balance and writes nothing when the balance cannot cover it", async () => {
    const account = await createAccount({ balance_usd: 4 });
    const response = await order(account.token, { product: "residential", gb: 1 });
    expect(response.status).toBe(409);
    expect((await json(response)).code).toBe("insufficient_balance");
    expect(await balanceMinor(account.id)).toBe(400);
    expect((await json(await call("GET", "/v1/orders", { token: account.token }))).data).toEqual([]);
    expect((await json(await call("GET", "/v1/residential/balance", { token: account.token }))).gb_purchased).toBe(0);
  });

  it("concurrent orders that together exceed the balance: exactly as many succeed as it covers", async () => {
    const account = await createAccount({ balance_usd: 45 }); // ten 1-GB residential orders
    const results = await Promise.all(
      Array.from({ length: 16 }, () => order(account.token, { product: "residential", gb: 1 })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    for (const refused of results.filter((r) => r.status !== 201)) {
      expect(refused.status).toBe(409);
      expect((await json(refused)).code).toBe("insufficient_balance");
    }
    expect(await balanceMinor(account.id)).toBe(0);
    expect(await ledgerSum(account.id)).toBe(0);
    expect((await json(await call("GET", "/v1/residential/balance", { token: account.token }))).gb_purchased).toBe(10);
  });

  it("never charges twice for Idempotency-Key retries, even concurrent ones", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const first = await Promise.all(
      Array.from({ length: 5 }, () => order(account.token, { product: "residential", gb: 2 }, "order-once")),
    );
    const created = first.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const other of first.filter((r) => r.status !== 201))
      expect((await json(other)).code).toBe("idempotency_key_in_use");
    const retry = await order(account.token, { product: "residential", gb: 2 }, "order-once");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await balanceMinor(account.id)).toBe(10000 - 900);
    expect((await json(await call("GET", "/v1/orders", { token: account.token }))).data).toHaveLength(1);
  });

  it("requires an approved KYC while the account is under risk review (409 kyc_required)", async () => {
    const account = await createAccount({ balance_usd: 100 });
    await admin("PATCH", `/accounts/${account.id}`, { risk_review: true, kyc_status: "pending" });
    const refused = await order(account.token, { product: "residential", gb: 1 });
    expect(refused.status).toBe(409);
    expect((await json(refused)).code).toBe("kyc_required");
    await admin("PATCH", `/accounts/${account.id}`, { kyc_status: "approved" });
    expect((await order(account.token, { product: "residential", gb: 1 })).status).toBe(201);
  });

  it("lists and gets orders; another account's order is 404 not_found", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const created = await json(await order(account.token, { product: "residential", gb: 1 }));
    const got = await json(await call("GET", `/v1/orders/${created.id}`, { token: account.token }));
    expect(got).toEqual(created);
    const stranger = await createAccount();
    const foreign = await call("GET", `/v1/orders/${created.id}`, { token: stranger.token });
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).code).toBe("not_found");
  });
});

describe("ISP orders and inventory (spec §4.3)", () => {
  it("GET /v1/isp/inventory shows available quantity, cities (tier-1 only) and price per ASN", async () => {
    const account = await createAccount();
    const us = await json(await call("GET", "/v1/isp/inventory?country=us&asn=7922", { token: account.token }));
    expect(us.data).toHaveLength(1);
    expect(us.data[0]).toMatchObject({
      country: "US",
      asn: 7922,
      carrier: "Comcast",
      premium: false,
      price_per_ip_month_usd: 6,
    });
    expect(us.data[0].cities.map((c: { city: string }) => c.city).sort()).toEqual(["la", "newyork"]);
    expect(us.data[0].available).toBe(
      us.data[0].cities.reduce((n: number, c: { available: number }) => n + c.available, 0),
    );
    const premium = await json(await call("GET", "/v1/isp/inventory?country=US&asn=7018", { token: account.token }));
    expect(premium.data[0]).toMatchObject({ premium: true, price_per_ip_month_usd: 7.2 });
    const longTail = await json(await call("GET", "/v1/isp/inventory?country=PL", { token: account.token }));
    expect(longTail.data[0].cities).toEqual([]);
    expect(longTail.data[0].available).toBeGreaterThan(0);
  });

  it("debits, creates a batch and answers provisioning with details {batch_id, quantity, country, city, asn, expires_at}", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const subuser = await createSubuser(account, { products: ["isp"] });
    const response = await order(account.token, {
      product: "isp",
      country: "US",
      city: "la",
      asn: 7922,
      quantity: 5,
      months: 2,
      subuser: subuser.id,
    });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toMatchObject({
      product: "isp",
      status: "provisioning",
      total_usd: 60,
      details: { quantity: 5, country: "US", city: "la", asn: 7922 },
    });
    expect(body.details.batch_id).toMatch(/^bat_/);
    expect(body.details.expires_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect((await json(await call("GET", "/v1/users/me", { token: account.token }))).balance.amount).toBe(940);
    const batch = await json(await call("GET", `/v1/isp/batches/${body.details.batch_id}`, { token: account.token }));
    expect(batch).toMatchObject({ status: "provisioning", quantity: 5, subuser: subuser.id });
  });

  it.each([
    [4, "quantity_out_of_range"],
    [5001, "quantity_out_of_range"],
  ])("quantity %i → 422 %s", async (quantity, code) => {
    const account = await createAccount({ balance_usd: 1000 });
    const subuser = await createSubuser(account, { products: ["isp"] });
    const response = await order(account.token, {
      product: "isp",
      country: "US",
      asn: 7922,
      quantity,
      months: 1,
      subuser: subuser.id,
    });
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe(code);
  });

  it("422 insufficient_inventory beyond the stock of the geo/ASN; nothing is charged", async () => {
    const account = await createAccount({ balance_usd: 100000 });
    const subuser = await createSubuser(account, { products: ["isp"] });
    const response = await order(account.token, {
      product: "isp",
      country: "ZA",
      asn: 37457,
      quantity: 101,
      months: 1,
      subuser: subuser.id,
    });
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe("insufficient_inventory");
    const unknownAsn = await order(account.token, {
      product: "isp",
      country: "US",
      asn: 1,
      quantity: 5,
      months: 1,
      subuser: subuser.id,
    });
    expect((await json(unknownAsn)).code).toBe("insufficient_inventory");
    expect(await balanceMinor(account.id)).toBe(10000000);
  });

  it("404 subuser_not_found for another account's sub-user or one without isp; city only in tier-1", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const residential = await createSubuser(account, { products: ["residential"] });
    const other = await createAccount();
    const foreign = await createSubuser(other, { products: ["isp"] });
    for (const subuser of [residential.id, foreign.id, "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V"]) {
      const response = await order(account.token, {
        product: "isp",
        country: "US",
        asn: 7922,
        quantity: 5,
        months: 1,
        subuser,
      });
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("subuser_not_found");
    }
    const isp = await createSubuser(account, { products: ["isp"] });
    const city = await order(account.token, {
      product: "isp",
      country: "PL",
      city: "warsaw",
      asn: 5617,
      quantity: 5,
      months: 1,
      subuser: isp.id,
    });
    expect(city.status).toBe(422);
    expect((await json(city)).details[0].field).toBe("city");
  });

  it("concurrent ISP orders never allocate one IP twice, and never beyond stock", async () => {
    const account = await createAccount({ balance_usd: 100000 });
    const subuser = await createSubuser(account, { products: ["isp"] });
    const results = await Promise.all(
      Array.from({ length: 3 }, () =>
        order(account.token, {
          product: "isp",
          country: "AR",
          asn: 7303,
          quantity: 40,
          months: 1,
          subuser: subuser.id,
        }),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    expect(results.filter((r) => r.status === 422)).toHaveLength(1);
    const taken = await env.DB.prepare(
      "SELECT COUNT(*) AS n, COUNT(DISTINCT batch_id) AS b FROM isp_ips WHERE country = 'AR' AND batch_id IS NOT NULL",
    ).first();
    expect(taken).toEqual({ n: 80, b: 2 });
    expect(await balanceMinor(account.id)).toBe(10000000 - 2 * 40 * 600);
  });
});

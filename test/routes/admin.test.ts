import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { admin, call, env, json } from "../helpers/http";

describe("admin API: accounts", () => {
  it("creates an account in the spec 2.1 shape with defaults", async () => {
    const response = await admin("POST", "/accounts", { email: "new-admin@example.com" });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body).toMatchObject({
      email: "new-admin@example.com",
      plan: "trial",
      kyc_status: "not-submitted",
      company: null,
      balance: { currency: "USD", amount: 0 },
      risk_review: false,
    });
    expect(body.id).toMatch(/^usr_/);
  });

  it("answers a duplicate email with 409 email_in_use (on create and on change)", async () => {
    await admin("POST", "/accounts", { email: "dup@example.com" });
    const again = await admin("POST", "/accounts", { email: "dup@example.com" });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("email_in_use");
    const other = await json(await admin("POST", "/accounts", { email: "other@example.com" }));
    const change = await admin("PATCH", `/accounts/${other.id}`, { email: "dup@example.com" });
    expect(change.status).toBe(409);
    expect((await json(change)).code).toBe("email_in_use");
  });

  it("validates input: unknown plan, bad email, negative or sub-cent balance → 422", async () => {
    for (const body of [
      { email: "x@example.com", plan: "gold" },
      { email: "nope" },
      { email: "y@example.com", balance_usd: -1 },
      { email: "z@example.com", balance_usd: 1.005 },
      { email: "w@example.com", surprise: true },
    ]) {
      const response = await admin("POST", "/accounts", body);
      expect(response.status, JSON.stringify(body)).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
  });

  it("accepts business as a plan", async () => {
    expect((await admin("POST", "/accounts", { email: "biz@example.com", plan: "business" })).status).toBe(201);
  });

  it("patches plan, KYC, risk review and limits", async () => {
    const account = await createAccount({ plan: "trial" });
    const response = await admin("PATCH", `/accounts/${account.id}`, {
      plan: "enterprise",
      kyc_status: "approved",
      risk_review: true,
      limits: { api_burst_per_min: 9000, concurrent: { residential: 5000 } },
    });
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({
      plan: "enterprise",
      kyc_status: "approved",
      risk_review: true,
      limits: { api_burst_per_min: 9000, concurrent: { residential: 5000 } },
    });
  });

  it("answers an unknown account id with 404 not_found", async () => {
    const response = await admin("PATCH", "/accounts/usr_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", { plan: "pro" });
    expect(response.status).toBe(404);
    expect((await json(response)).code).toBe("not_found");
  });

  it("credits the balance in integer cents and writes a ledger entry", async () => {
    const account = await createAccount({ balance_usd: 10.1 });
    const response = await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 0.2 });
    expect(response.status).toBe(200);
    expect((await json(response)).balance.amount).toBe(10.3);
    const row = await env.DB.prepare("SELECT balance_minor FROM accounts WHERE id = ?").bind(account.id).first();
    expect(row?.balance_minor).toBe(1030);
    const ledger = await env.DB.prepare("SELECT SUM(amount_minor) AS total FROM ledger_entries WHERE account_id = ?")
      .bind(account.id)
      .first();
    expect(ledger?.total).toBe(1030);
    expect((await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 0 })).status).toBe(422);
  });
});

describe("admin API: API keys", () => {
  it("issues a key shown once with a product scope, stored only as a hash", async () => {
    const account = await createAccount();
    const response = await admin("POST", `/accounts/${account.id}/api-keys`, { products: ["residential", "mobile"] });
    expect(response.status).toBe(201);
    const key = await json(response);
    expect(key.id).toMatch(/^key_/);
    expect(key.token).toMatch(/^live_[0-9A-Za-z]{64}$/);
    expect(key.products).toEqual(["residential", "mobile"]);
    const rows = await env.DB.prepare("SELECT * FROM api_keys WHERE id = ?").bind(key.id).all();
    expect(JSON.stringify(rows.results)).not.toContain(key.token);

    const listed = await json(await admin("GET", `/accounts/${account.id}/api-keys`));
    expect(JSON.stringify(listed)).not.toContain(key.token);
    expect(listed.data.map((k: { id: string }) => k.id)).toContain(key.id);
  });

  it("rejects an unknown or repeated product in the scope", async () => {
    const account = await createAccount();
    expect((await admin("POST", `/accounts/${account.id}/api-keys`, { products: ["datacenter"] })).status).toBe(422);
    expect((await admin("POST", `/accounts/${account.id}/api-keys`, { products: ["isp", "isp"] })).status).toBe(422);
  });

  it("revoking an unknown key is 404, revoking twice is harmless", async () => {
    const account = await createAccount();
    expect((await admin("DELETE", "/api-keys/key_01JD2W6Q6J5E4V3N0Z9Y8X7W6V")).status).toBe(404);
    expect((await admin("DELETE", `/api-keys/${account.keyId}`)).status).toBe(200);
    expect((await admin("DELETE", `/api-keys/${account.keyId}`)).status).toBe(200);
    expect((await call("GET", "/v1/users/me", { token: account.token })).status).toBe(401);
  });
});

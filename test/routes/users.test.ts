import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

function patchMe(token: string, body: unknown) {
  return call("PATCH", "/v1/users/me", { token, body });
}

describe("GET /v1/users/me (spec §2.1)", () => {
  it("returns the spec's account fields", async () => {
    const account = await createAccount({ plan: "starter", balance_usd: 99.99, company: "Acme" });
    const body = await json(await call("GET", "/v1/users/me", { token: account.token }));
    expect(body).toMatchObject({
      id: account.id,
      email: account.email,
      company: "Acme",
      plan: "starter",
      kyc_status: "not-submitted",
      balance: { currency: "USD", amount: 99.99 },
    });
    expect(body.id).toMatch(/^usr_/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);
  });

  it("shows only the key's own account", async () => {
    const a = await createAccount();
    const b = await createAccount();
    expect((await json(await call("GET", "/v1/users/me", { token: b.token }))).id).toBe(b.id);
    expect((await json(await call("GET", "/v1/users/me", { token: a.token }))).id).toBe(a.id);
  });
});

describe("PATCH /v1/users/me", () => {
  it("updates the editable fields", async () => {
    const account = await createAccount();
    const response = await patchMe(account.token, {
      company: "Acme Data Ltd",
      default_currency: "EUR",
      notification_email: "ops@acme.example",
      billing_address: { line1: "Unter den Linden 1", city: "Berlin", postal_code: "10117", country: "de" },
      tax_id: "DE 123.456.789",
    });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      company: "Acme Data Ltd",
      default_currency: "EUR",
      notification_email: "ops@acme.example",
      tax_id: "DE123456789",
      billing_address: { country: "DE", city: "Berlin" },
    });
    expect(await json(await call("GET", "/v1/users/me", { token: account.token }))).toEqual(body);
  });

  it.each([
    [{ email: "new@example.com" }, "email"],
    [{ plan: "enterprise" }, "plan"],
    [{ balance: { amount: 1e6 } }, "balance"],
    [{ kyc_status: "approved" }, "kyc_status"],
    [{ company: "Ok", id: "usr_x" }, "id"],
  ])("rejects a non-editable field %j with 422 invalid_request and changes nothing", async (patch, field) => {
    const account = await createAccount({ company: "Unchanged" });
    const response = await patchMe(account.token, patch);
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body.code).toBe("invalid_request");
    expect(body.details.map((d: { field: string }) => d.field)).toContain(field);
    const me = await json(await call("GET", "/v1/users/me", { token: account.token }));
    expect(me.company).toBe("Unchanged");
    expect(me.plan).toBe("pro");
  });

  it.each([
    [{ default_currency: "XYZ" }],
    [{ notification_email: "not-an-email" }],
    [{ company: "" }],
    [{ billing_address: { city: "No line1", country: "US" } }],
    [{ billing_address: { line1: "x", city: "y", country: "USA" } }],
  ])("rejects malformed values %j with 422 invalid_request", async (patch) => {
    const account = await createAccount();
    const response = await patchMe(account.token, patch);
    expect(response.status).toBe(422);
    expect((await json(response)).code).toBe("invalid_request");
  });

  it.each([
    [{ billing_address: { line1: "1 Main", city: "Springfield", state: "XX", postal_code: "12345", country: "US" } }],
    [{ billing_address: { line1: "1 Main", city: "Springfield", state: "IL", postal_code: "ABCDE", country: "US" } }],
    [{ billing_address: { line1: "1 Main", city: "Nowhere", country: "ZZ" } }],
    [{ billing_address: { line1: "1 Rue", city: "Paris", country: "FR" }, tax_id: "DE123456789" }],
  ])(
    "rejects an address or tax id failing tax-jurisdiction validation %j with 422 invalid_billing_address",
    async (patch) => {
      const account = await createAccount();
      const response = await patchMe(account.token, patch);
      expect(response.status).toBe(422);
      expect((await json(response)).code).toBe("invalid_billing_address");
      expect((await json(await call("GET", "/v1/users/me", { token: account.token }))).billing_address).toBeNull();
    },
  );

  it("checks a new tax id against the stored billing country", async () => {
    const account = await createAccount();
    await patchMe(account.token, { billing_address: { line1: "1 Rue", city: "Paris", country: "FR" } });
    const wrong = await patchMe(account.token, { tax_id: "DE123456789" });
    expect((await json(wrong)).code).toBe("invalid_billing_address");
    const right = await patchMe(account.token, { tax_id: "FR12345678901" });
    expect(right.status).toBe(200);
  });

  it("clears nullable fields with null", async () => {
    const account = await createAccount({ company: "Acme" });
    const body = await json(await patchMe(account.token, { company: null }));
    expect(body.company).toBeNull();
  });
});

describe("GET /v1/users/me/security (spec §2.2)", () => {
  afterEach(() => vi.useRealTimers());

  it("reports MFA off and the latest authenticated call's time and IP, written at most once a minute", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    const account = await createAccount();
    const first = await call("GET", "/v1/users/me/security", {
      token: account.token,
      headers: { "CF-Connecting-IP": "203.0.113.7" },
    });
    const body = await json(first);
    expect(body).toEqual({
      mfa_enabled: false,
      mfa_method: null,
      mfa_pending: false,
      last_login_at: new Date(T0).toISOString(),
      last_login_ip: "203.0.113.7",
      livemode: true,
    });

    vi.setSystemTime(T0 + 30_000);
    const soon = await json(
      await call("GET", "/v1/users/me/security", {
        token: account.token,
        headers: { "CF-Connecting-IP": "198.51.100.1" },
      }),
    );
    expect(soon.last_login_ip).toBe("203.0.113.7");

    vi.setSystemTime(T0 + 61_000);
    await call("GET", "/v1/users/me", { token: account.token, headers: { "CF-Connecting-IP": "198.51.100.1" } });
    const later = await json(await call("GET", "/v1/users/me/security", { token: account.token }));
    expect(later.last_login_ip).toBe("198.51.100.1");
    expect(later.last_login_at).toBe(new Date(T0 + 61_000).toISOString());
  });
});

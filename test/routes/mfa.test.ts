import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { codeAt, enableMfa, MFA } from "../helpers/mfa";

const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);
const address = { line1: "1 Main St", city: "Springfield", state: "IL", postal_code: "62701", country: "US" };

describe("MFA (spec §2.2, §4.1, §5.4)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
  });
  afterEach(() => vi.useRealTimers());

  it("enrollment returns a base32 secret, an otpauth URI and 10 recovery codes; MFA is pending until verified", async () => {
    const account = await createAccount();
    const response = await call("POST", MFA, { token: account.token, body: { method: "totp" } });
    expect(response.status).toBe(201);
    const body = await json(response);
    expect(body.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/.*secret=/);
    expect(body.recovery_codes).toHaveLength(10);
    expect(new Set(body.recovery_codes).size).toBe(10);
    expect(body.status).toBe("pending_verification");
    const security = await json(await call("GET", "/v1/users/me/security", { token: account.token }));
    expect(security).toMatchObject({ mfa_enabled: false, mfa_pending: true });
  });

  it("stores the secret sealed and the recovery codes hashed, never in plain text", async () => {
    const account = await createAccount();
    const body = await json(await call("POST", MFA, { token: account.token, body: { method: "totp" } }));
    const row = await env.DB.prepare("SELECT * FROM accounts WHERE id = ?").bind(account.id).first();
    expect(JSON.stringify(row)).not.toContain(body.secret);
    const codes = await env.DB.prepare("SELECT code_hash FROM mfa_recovery_codes WHERE account_id = ?")
      .bind(account.id)
      .all();
    expect(codes.results).toHaveLength(10);
    expect(JSON.stringify(codes.results)).not.toContain(body.recovery_codes[0]);
  });

  it("rejects an unknown method with 422", async () => {
    const account = await createAccount();
    const response = await call("POST", MFA, { token: account.token, body: { method: "sms" } });
    expect(response.status).toBe(422);
  });

  it("a wrong verification code answers 403 mfa_required and leaves MFA off", async () => {
    const account = await createAccount();
    await call("POST", MFA, { token: account.token, body: { method: "totp" } });
    const response = await call("POST", `${MFA}/verify`, { token: account.token, body: { code: "000000" } });
    expect(response.status).toBe(403);
    expect((await json(response)).code).toBe("mfa_required");
    expect((await json(await call("GET", "/v1/users/me/security", { token: account.token }))).mfa_enabled).toBe(false);
  });

  it("verification with the first code enables MFA with method totp", async () => {
    const account = await createAccount();
    await enableMfa(account);
    const security = await json(await call("GET", "/v1/users/me/security", { token: account.token }));
    expect(security).toMatchObject({ mfa_enabled: true, mfa_method: "totp", mfa_pending: false });
  });

  it("gates billing and tax changes behind X-MFA-Code once enabled, but not other fields", async () => {
    const account = await createAccount();
    const { secret } = await enableMfa(account);
    const withoutCode = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { billing_address: address },
    });
    expect(withoutCode.status).toBe(403);
    expect((await json(withoutCode)).code).toBe("mfa_required");
    const taxWithoutCode = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { tax_id: "12-3456789" },
    });
    expect(taxWithoutCode.status).toBe(403);

    const company = await call("PATCH", "/v1/users/me", { token: account.token, body: { company: "No MFA needed" } });
    expect(company.status).toBe(200);

    vi.setSystemTime(T0 + 60_000);
    const withCode = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { billing_address: address },
      headers: { "X-MFA-Code": codeAt(secret, T0 + 60_000) },
    });
    expect(withCode.status).toBe(200);
  });

  it("accepts a TOTP code once, within ±1 time step of drift", async () => {
    const account = await createAccount();
    const { secret } = await enableMfa(account);
    vi.setSystemTime(T0 + 120_000);
    const code = codeAt(secret, T0 + 120_000);
    const patch = (mfa: string, company: string) =>
      call("PATCH", "/v1/users/me", {
        token: account.token,
        body: { tax_id: "12-3456789", company },
        headers: { "X-MFA-Code": mfa },
      });
    expect((await patch(code, "a")).status).toBe(200);
    const replayed = await patch(code, "b");
    expect(replayed.status).toBe(403);
    expect((await json(replayed)).code).toBe("mfa_required");

    // One step late (the next step's clock, previous step's code) is accepted; two steps late is not.
    vi.setSystemTime(T0 + 240_000);
    expect((await patch(codeAt(secret, T0 + 210_000), "c")).status).toBe(200);
    vi.setSystemTime(T0 + 360_000);
    expect((await patch(codeAt(secret, T0 + 300_000), "d")).status).toBe(403);
  });

  it("accepts each recovery code once in place of a TOTP code", async () => {
    const account = await createAccount();
    const { recovery } = await enableMfa(account);
    const patch = () =>
      call("PATCH", "/v1/users/me", {
        token: account.token,
        body: { tax_id: "12-3456789" },
        headers: { "X-MFA-Code": recovery[0]! },
      });
    expect((await patch()).status).toBe(200);
    expect((await patch()).status).toBe(403);
  });

  it("re-enrolling while enabled requires a code; the old factor stays in force until the new one is verified", async () => {
    const account = await createAccount();
    const { secret } = await enableMfa(account);
    const without = await call("POST", MFA, { token: account.token, body: { method: "totp" } });
    expect(without.status).toBe(403);
    vi.setSystemTime(T0 + 60_000);
    const reenroll = await call("POST", MFA, {
      token: account.token,
      body: { method: "totp" },
      headers: { "X-MFA-Code": codeAt(secret, T0 + 60_000) },
    });
    expect(reenroll.status).toBe(201);
    const security = await json(await call("GET", "/v1/users/me/security", { token: account.token }));
    expect(security).toMatchObject({ mfa_enabled: true, mfa_pending: true });
  });

  it("disabling MFA requires a code", async () => {
    const account = await createAccount();
    const { secret } = await enableMfa(account);
    expect((await call("DELETE", MFA, { token: account.token })).status).toBe(403);
    vi.setSystemTime(T0 + 60_000);
    const disabled = await call("DELETE", MFA, {
      token: account.token,
      headers: { "X-MFA-Code": codeAt(secret, T0 + 60_000) },
    });
    expect(disabled.status).toBe(200);
    expect((await json(disabled)).mfa_enabled).toBe(false);
  });
});

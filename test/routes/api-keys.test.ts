import * as OTPAuth from "otpauth";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { orderBatch } from "../helpers/isp";
import { sandboxOf } from "../helpers/sandbox";

const KEYS = "/v1/api-keys";
const HOUR = 3_600_000;

async function createKey(caller: { token?: string }, body: Record<string, unknown> = {}, headers = {}) {
  const response = await call("POST", KEYS, { token: caller.token, body, headers });
  return { response, body: await json(response) };
}

async function status(token: string, method: string, path: string, body?: unknown): Promise<number> {
  return (await call(method, path, { token, body })).status;
}

afterEach(() => vi.useRealTimers());

describe("API keys managed through the API", () => {
  it("creates a key whose token is shown once (no-store), works at once, and is listed and read without its token", async () => {
    const account = await createAccount();
    const { response, body: created } = await createKey(account, { name: "exporter" });
    expect(response.status).toBe(201);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(created).toMatchObject({
      id: expect.stringMatching(/^key_/),
      name: "exporter",
      token: expect.stringMatching(/^live_[0-9A-Za-z]{64}$/),
      token_hint: created.token.slice(0, 11),
      products: null,
      scopes: { account: "write", billing: "write", api_keys: "write" },
      expires_at: null,
      last_used_at: null,
    });
    expect(await status(created.token, "GET", "/v1/users/me")).toBe(200);
    const listed = await json(await call("GET", KEYS, { token: account.token }));
    expect(listed.data.map((key: Record<string, unknown>) => key.id)).toContain(created.id);
    const read = await json(await call("GET", `${KEYS}/${created.id}`, { token: account.token }));
    expect(read).not.toHaveProperty("token");
    expect(JSON.stringify(listed)).not.toContain(created.token);
    // Its use is recorded (at most once a minute), with the address it came from.
    await call("GET", "/v1/users/me", { token: created.token, headers: { "CF-Connecting-IP": "198.51.100.7" } });
    const used = await json(await call("GET", `${KEYS}/${created.id}`, { token: account.token }));
    expect(used.last_used_at).toEqual(expect.any(String));
  });

  it("a read-only key reads its areas and is refused writes and other areas with 403 insufficient_scope naming the scope", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const { body: readOnly } = await createKey(account, { scopes: { billing: "read", traffic: "read" } });
    expect(await status(readOnly.token, "GET", "/v1/orders")).toBe(200);
    expect(await status(readOnly.token, "GET", "/v1/residential/balance")).toBe(200);
    // A quote changes nothing: a billing read.
    const quote = await call("POST", "/v1/orders/quote", {
      token: readOnly.token,
      body: { product: "residential", gb: 1 },
    });
    expect(quote.status).toBe(200);
    // The quote tells what the order would get with this key: refused for want of billing:write.
    expect((await json(quote)).error).toMatchObject({ status: 403, code: "insufficient_scope" });
    const order = await call("POST", "/v1/orders", { token: readOnly.token, body: { product: "residential", gb: 1 } });
    expect(order.status).toBe(403);
    expect(await json(order)).toMatchObject({
      code: "insufficient_scope",
      message: expect.stringContaining("billing:write"),
    });
    const subusers = await call("GET", "/v1/subusers", { token: readOnly.token });
    expect(subusers.status).toBe(403);
    expect((await json(subusers)).message).toContain("subusers:read");
    for (const [method, path] of [
      ["GET", "/v1/users/me"],
      ["GET", "/v1/isp/batches"],
      ["GET", "/v1/reports"],
      ["GET", "/v1/webhook-endpoints"],
      ["GET", "/v1/events"],
      ["GET", KEYS],
    ]) {
      expect(await status(readOnly.token, method as string, path as string), path).toBe(403);
    }
    // Nothing was ordered.
    expect((await json(await call("GET", "/v1/orders", { token: account.token }))).data).toHaveLength(0);
  });

  it("managing keys needs api_keys:write; a key can never grant more than the key that makes or changes it", async () => {
    const account = await createAccount();
    const { body: reader } = await createKey(account, { scopes: { api_keys: "read", billing: "read" } });
    expect(await status(reader.token, "GET", KEYS)).toBe(200);
    const refused = await createKey(reader, { scopes: { billing: "read" } });
    expect(refused.response.status).toBe(403);
    expect(refused.body.message).toContain("api_keys:write");

    const { body: manager } = await createKey(account, {
      products: ["residential"],
      scopes: { api_keys: "write", billing: "read" },
    });
    const wider = await createKey(manager, { scopes: { billing: "write" } });
    expect(wider.response.status).toBe(403);
    expect(wider.body).toMatchObject({ code: "insufficient_scope", message: expect.stringContaining("billing:write") });
    const otherProduct = await createKey(manager, { products: ["mobile"], scopes: { billing: "read" } });
    expect(otherProduct.response.status).toBe(403);
    const everything = await createKey(manager, { products: null, scopes: { billing: "read" } });
    expect(everything.response.status).toBe(403);
    const narrower = await createKey(manager, { scopes: { billing: "read" } });
    expect(narrower.response.status).toBe(201);
    expect(narrower.body).toMatchObject({ products: ["residential"], scopes: { billing: "read" } });
    // Nor by a change: the manager cannot widen a key (its own included) past its own grant.
    // Nor can it touch a stronger key: rotating the account's full key would hand it that key's token.
    for (const [method, path] of [
      ["POST", `${KEYS}/${account.keyId}/rotate`],
      ["PATCH", `${KEYS}/${account.keyId}`],
      ["DELETE", `${KEYS}/${account.keyId}`],
    ] as const) {
      const stronger = await call(method, path, { token: manager.token, body: method === "DELETE" ? undefined : {} });
      expect(stronger.status, `${method} ${path}`).toBe(403);
      expect((await json(stronger)).code).toBe("insufficient_scope");
    }
    expect(await status(account.token, "GET", "/v1/users/me")).toBe(200);
    const widen = await call("PATCH", `${KEYS}/${manager.id}`, {
      token: manager.token,
      body: { scopes: { billing: "write", api_keys: "write" } },
    });
    expect(widen.status).toBe(403);
  });

  it("an expired key answers 401 at once; an expiry must be in the future and within the calling key's own", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 10, 25, 12);
    vi.setSystemTime(t0);
    const account = await createAccount();
    const past = await createKey(account, { expires_at: new Date(t0 - HOUR).toISOString() });
    expect(past.response.status).toBe(422);
    const { body: shortLived } = await createKey(account, { expires_at: new Date(t0 + HOUR).toISOString() });
    expect(shortLived.expires_at).toBe(new Date(t0 + HOUR).toISOString());
    expect(await status(shortLived.token, "GET", "/v1/users/me")).toBe(200);
    const outliving = await createKey(shortLived, {});
    expect(outliving.response.status).toBe(201);
    expect(outliving.body.expires_at).toBe(shortLived.expires_at);
    const later = await createKey(shortLived, { expires_at: new Date(t0 + 2 * HOUR).toISOString() });
    expect(later.response.status).toBe(403);
    vi.setSystemTime(t0 + HOUR);
    const expired = await call("GET", "/v1/users/me", { token: shortLived.token });
    expect(expired.status).toBe(401);
    expect((await json(expired)).message).toContain("expired");
  });

  it("a revoked key answers 401 from the next call on, even the key that revoked itself", async () => {
    const account = await createAccount();
    const { body: key } = await createKey(account);
    const deleted = await call("DELETE", `${KEYS}/${key.id}`, { token: key.token });
    expect(deleted.status).toBe(200);
    expect(await json(deleted)).toEqual({ id: key.id, deleted: true, livemode: true });
    expect(await status(key.token, "GET", "/v1/users/me")).toBe(401);
    expect((await call("GET", `${KEYS}/${key.id}`, { token: account.token })).status).toBe(404);
    // Revoking again completes a revocation whose push to the guard may have failed: answered, not 404.
    expect((await call("DELETE", `${KEYS}/${key.id}`, { token: account.token })).status).toBe(200);
  });

  it("a rotation gives a new token; the old one works for the grace period, then answers 401 (0 s: at once)", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 10, 25, 12);
    vi.setSystemTime(t0);
    const account = await createAccount();
    const { body: key } = await createKey(account);
    const rotated = await call("POST", `${KEYS}/${key.id}/rotate`, {
      token: account.token,
      body: { grace_seconds: 600 },
    });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get("Cache-Control")).toBe("no-store");
    const fresh = await json(rotated);
    expect(fresh.token).not.toBe(key.token);
    expect(fresh.previous_token_expires_at).toBe(new Date(t0 + 600_000).toISOString());
    expect(await status(fresh.token, "GET", "/v1/users/me")).toBe(200);
    expect(await status(key.token, "GET", "/v1/users/me")).toBe(200);
    vi.setSystemTime(t0 + 600_000);
    expect(await status(key.token, "GET", "/v1/users/me")).toBe(401);
    expect(await status(fresh.token, "GET", "/v1/users/me")).toBe(200);

    const now = await json(
      await call("POST", `${KEYS}/${key.id}/rotate`, { token: account.token, body: { grace_seconds: 0 } }),
    );
    expect(now.previous_token_expires_at).toBeNull();
    expect(await status(fresh.token, "GET", "/v1/users/me")).toBe(401);
    expect(await status(now.token, "GET", "/v1/users/me")).toBe(200);
  });

  it("a batch's IP list carries its password, which spends money: it needs isp:write, while isp:read reads the batch", async () => {
    const account = await createAccount({ balance_usd: 100 });
    const { batchId } = await orderBatch(account, { quantity: 10 });
    const { body: reader } = await createKey(account, { scopes: { isp: "read" } });
    expect(await status(reader.token, "GET", `/v1/isp/batches/${batchId}`)).toBe(200);
    const refused = await call("GET", `/v1/isp/batches/${batchId}/ips`, { token: reader.token });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({
      code: "insufficient_scope",
      message: expect.stringContaining("isp:write"),
    });
    const { body: writer } = await createKey(account, { scopes: { isp: "write" } });
    expect(await status(writer.token, "GET", `/v1/isp/batches/${batchId}/ips`)).toBe(200);
  });

  it("with MFA on, every key change needs X-MFA-Code (403 mfa_required)", async () => {
    const account = await createAccount();
    const enrollment = await json(
      await call("POST", "/v1/users/me/security/mfa", { token: account.token, body: { method: "totp" } }),
    );
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enrollment.secret), digits: 6, period: 30 });
    await call("POST", "/v1/users/me/security/mfa/verify", { token: account.token, body: { code: totp.generate() } });
    const withoutCode = await createKey(account, {});
    expect(withoutCode.response.status).toBe(403);
    expect(withoutCode.body.code).toBe("mfa_required");
    const withCode = await createKey(account, {}, { "X-MFA-Code": enrollment.recovery_codes[0] });
    expect(withCode.response.status).toBe(201);
  });

  it("another account's key answers 404 api_key_not_found on every operation, like an unknown id", async () => {
    const owner = await createAccount();
    const stranger = await createAccount();
    const { body: key } = await createKey(owner);
    const unknown = "key_01JD2W6Q6J5E4V3N0Z9Y8X7W6V";
    for (const id of [key.id, unknown, "not-an-id"]) {
      for (const [method, path, body] of [
        ["GET", `${KEYS}/${id}`, undefined],
        ["PATCH", `${KEYS}/${id}`, { name: "mine" }],
        ["POST", `${KEYS}/${id}/rotate`, {}],
        ["DELETE", `${KEYS}/${id}`, undefined],
      ] as const) {
        const response = await call(method, path, { token: stranger.token, body });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect((await json(response)).code).toBe("api_key_not_found");
      }
    }
    expect(await status(key.token, "GET", "/v1/users/me")).toBe(200);
    expect(
      (await json(await call("GET", KEYS, { token: stranger.token }))).data.map((k: TestAccount) => k.id),
    ).not.toContain(key.id);
  });

  it("a sandbox key manages the sandbox's keys, which are test_ keys", async () => {
    const account = await createAccount();
    const sandbox = await sandboxOf(account);
    const { body: created } = await createKey(sandbox);
    expect(created.token).toMatch(/^test_/);
    expect(created.livemode).toBe(false);
    const live = await json(await call("GET", KEYS, { token: account.token }));
    expect(live.data.map((key: Record<string, unknown>) => key.id)).not.toContain(created.id);
  });
});

describe("GET /api-keys/current: the calling key", () => {
  it("answers any key, even one without api_keys access, with its own scopes, products and expiry, never its token", async () => {
    const account = await createAccount();
    const expiresAt = new Date(Date.now() + 30 * 24 * HOUR).toISOString();
    const { body: narrow } = await createKey(account, {
      name: "reader",
      products: ["residential"],
      scopes: { traffic: "read" },
      expires_at: expiresAt,
    });
    const response = await call("GET", `${KEYS}/current`, { token: narrow.token });
    expect(response.status).toBe(200);
    const current = await json(response);
    expect(current).toMatchObject({
      id: narrow.id,
      name: "reader",
      products: ["residential"],
      scopes: { traffic: "read" },
      livemode: true,
    });
    expect(Date.parse(current.expires_at)).toBe(Date.parse(expiresAt));
    expect(current).not.toHaveProperty("token");
    // The same key is still refused the list of keys: introspection opens nothing else.
    expect(await status(narrow.token, "GET", KEYS)).toBe(403);
  });

  it("a full key reads as write on every area; a sandbox key as its own sandbox key", async () => {
    const account = await createAccount();
    const full = await json(await call("GET", `${KEYS}/current`, { token: account.token }));
    expect(full.id).toBe(account.keyId);
    expect(Object.values(full.scopes).every((access) => access === "write")).toBe(true);
    const sandbox = await sandboxOf(account);
    const test = await json(await call("GET", `${KEYS}/current`, { token: sandbox.token }));
    expect(test).toMatchObject({ id: sandbox.keyId, livemode: false, token_hint: sandbox.token.slice(0, 11) });
  });
});

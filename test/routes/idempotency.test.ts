import { runInDurableObject } from "cloudflare:test";
import * as OTPAuth from "otpauth";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ApiKeyGuard } from "../../src/durable-objects/api-key-guard";
import { sha256Hex } from "../../src/platform/crypto";
import { createAccount } from "../helpers/accounts";
import { call, guardStub, json } from "../helpers/http";

const ENROLL = "/v1/users/me/security/mfa";
const T0 = Date.UTC(2026, 10, 21, 12, 0, 0);

function enroll(token: string, key: string, body: unknown = { method: "totp" }) {
  return call("POST", ENROLL, { token, body, headers: { "Idempotency-Key": key } });
}

describe("Idempotency-Key (spec §8.5)", () => {
  afterEach(() => vi.useRealTimers());

  it("replays the first response byte-identically, with Idempotent-Replayed and the original request id", async () => {
    const account = await createAccount();
    const first = await enroll(account.token, "enroll-1");
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const second = await enroll(account.token, "enroll-1");
    expect(second.status).toBe(201);
    expect(await second.text()).toBe(firstBody);
    expect(second.headers.get("Idempotent-Replayed")).toBe("true");
    expect(second.headers.get("X-Request-Id")).toBe(first.headers.get("X-Request-Id"));
    expect(second.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("refuses the same key with a different body or path with 422 idempotency_key_reused, without side effects", async () => {
    const account = await createAccount({ company: "Before" });
    const key = "patch-1";
    const first = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { company: "After" },
      headers: { "Idempotency-Key": key },
    });
    expect(first.status).toBe(200);
    const otherBody = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { company: "Other" },
      headers: { "Idempotency-Key": key },
    });
    expect(otherBody.status).toBe(422);
    expect((await json(otherBody)).code).toBe("idempotency_key_reused");
    const otherPath = await enroll(account.token, key);
    expect((await json(otherPath)).code).toBe("idempotency_key_reused");
    const me = await json(await call("GET", "/v1/users/me", { token: account.token }));
    expect(me.company).toBe("After");
  });

  it("executes once when retries arrive concurrently: others see 409 idempotency_key_in_use or the replay", async () => {
    const account = await createAccount();
    const responses = await Promise.all(Array.from({ length: 6 }, () => enroll(account.token, "concurrent")));
    const executed = responses.filter((r) => r.status === 201 && r.headers.get("Idempotent-Replayed") === null);
    expect(executed).toHaveLength(1);
    for (const response of responses) {
      if (response.status === 409) expect((await json(response)).code).toBe("idempotency_key_in_use");
      else expect(response.status).toBe(201);
    }
    const secrets = new Set(
      await Promise.all(responses.filter((r) => r.status === 201).map(async (r) => (await json(r)).secret)),
    );
    expect(secrets.size).toBe(1);
  });

  it("answers 409 while the first request is in flight, and a crashed claim frees the key after its lease", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    const account = await createAccount();
    const body = JSON.stringify({ method: "totp" });
    const fingerprint = await sha256Hex(`POST ${ENROLL}\n${body}`);
    // A request that claimed the key and never finished (its worker crashed).
    await runInDurableObject(guardStub(account.keyId), (guard: ApiKeyGuard) =>
      guard.admit({ key: "crashy", fingerprint }),
    );
    const during = await enroll(account.token, "crashy");
    expect(during.status).toBe(409);
    expect((await json(during)).code).toBe("idempotency_key_in_use");

    vi.setSystemTime(T0 + 61_000);
    const after = await enroll(account.token, "crashy");
    expect(after.status).toBe(201);
    expect(after.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await enroll(account.token, "crashy")).headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("is scoped to the caller: two accounts using one key both execute", async () => {
    const a = await createAccount();
    const b = await createAccount();
    const ra = await json(await enroll(a.token, "shared-key"));
    const rb = await enroll(b.token, "shared-key");
    expect(rb.status).toBe(201);
    expect(rb.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(rb)).secret).not.toBe(ra.secret);
  });

  it("stores nothing for a request that failed validation", async () => {
    const account = await createAccount();
    const invalid = await enroll(account.token, "fix-me", { method: "sms" });
    expect(invalid.status).toBe(422);
    expect((await json(invalid)).code).toBe("invalid_request");
    const malformed = await call("POST", ENROLL, {
      token: account.token,
      body: "{",
      headers: { "Idempotency-Key": "fix-me" },
    });
    expect(malformed.status).toBe(400);
    const corrected = await enroll(account.token, "fix-me");
    expect(corrected.status).toBe(201);
    expect(corrected.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("stores nothing for a 403 mfa_required: the retry with X-MFA-Code and the same key executes", async () => {
    const account = await createAccount();
    const enrollment = await json(await enroll(account.token, "enroll-once"));
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enrollment.secret), digits: 6, period: 30 });
    await call("POST", `${ENROLL}/verify`, { token: account.token, body: { code: totp.generate() } });
    const headers = { "Idempotency-Key": "needs-mfa" };
    const body = { name: "with mfa" };
    const refused = await call("POST", "/v1/api-keys", { token: account.token, body, headers });
    expect(refused.status).toBe(403);
    expect((await json(refused)).code).toBe("mfa_required");
    const retried = await call("POST", "/v1/api-keys", {
      token: account.token,
      body,
      headers: { ...headers, "X-MFA-Code": enrollment.recovery_codes[0] },
    });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("accepts keys up to 64 characters and rejects longer ones with 422 invalid_request", async () => {
    const account = await createAccount();
    expect((await enroll(account.token, "k".repeat(64))).status).toBe(201);
    const tooLong = await enroll(account.token, "k".repeat(65));
    expect(tooLong.status).toBe(422);
    const body = await json(tooLong);
    expect(body.code).toBe("invalid_request");
    expect(body.details[0].field).toBe("Idempotency-Key");
  });

  it("forgets a response after 24 hours", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    const account = await createAccount();
    const first = await json(await enroll(account.token, "daily"));
    vi.setSystemTime(T0 + 24 * 3_600_000 + 1_000);
    const later = await enroll(account.token, "daily");
    expect(later.status).toBe(201);
    expect(later.headers.get("Idempotent-Replayed")).toBeNull();
    expect((await json(later)).secret).not.toBe(first.secret);
  });

  it("replays stored error responses too (a retry gets the same answer)", async () => {
    const account = await createAccount();
    const first = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { billing_address: { line1: "x", city: "y", country: "US", state: "ZZ", postal_code: "1" } },
      headers: { "Idempotency-Key": "bad-address" },
    });
    expect(first.status).toBe(422);
    expect((await json(first.clone())).code).toBe("invalid_billing_address");
    const again = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: { billing_address: { line1: "x", city: "y", country: "US", state: "ZZ", postal_code: "1" } },
      headers: { "Idempotency-Key": "bad-address" },
    });
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());
  });

  it("keeps a response that shows a secret only sealed, yet a retry still gets the secret, with no-store", async () => {
    const account = await createAccount();
    const create = () =>
      call("POST", "/v1/subusers", {
        token: account.token,
        body: { label: "sealed", products: ["residential"] },
        headers: { "Idempotency-Key": "sealed-subuser" },
      });
    const first = await create();
    expect(first.status).toBe(201);
    expect(first.headers.get("Cache-Control")).toBe("no-store");
    const { password } = await json(first.clone());
    const stored = await runInDurableObject(guardStub(account.keyId), (_guard: ApiKeyGuard, state) =>
      state.storage.sql.exec<{ response: string }>("SELECT response FROM idempotency").toArray(),
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]?.response).not.toContain(password);
    expect(JSON.parse(stored[0]?.response as string)).toMatchObject({ sealed: true });

    const retry = await create();
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.headers.get("Cache-Control")).toBe("no-store");
    expect(await retry.text()).toBe(await first.text());
  });

  it("sends Cache-Control: no-store on every response that shows a secret", async () => {
    const account = await createAccount();
    const created = await call("POST", "/v1/subusers", {
      token: account.token,
      body: { label: "secret-1", products: ["residential"] },
    });
    const { id } = await json(created.clone());
    const rotated = await call("POST", `/v1/subusers/${id}/rotate-password`, { token: account.token });
    const enrolled = await call("POST", ENROLL, { token: account.token, body: { method: "totp" } });
    for (const response of [created, rotated, enrolled]) {
      expect(response.status).toBeLessThan(300);
      expect(response.headers.get("Cache-Control")).toBe("no-store");
    }
    const read = await call("GET", `/v1/subusers/${id}`, { token: account.token });
    expect(read.headers.get("Cache-Control")).toBeNull();
  });
});

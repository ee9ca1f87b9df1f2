import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { call, env, gateway, json } from "../helpers/http";
import { batchIps, getBatch, orderBatch } from "../helpers/isp";

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const MINUTE = 60_000;
const DAY = 86_400_000;

function at(ms: number) {
  vi.setSystemTime(ms);
  return ms;
}

async function balance(token: string): Promise<number> {
  return (await json(await call("GET", "/v1/users/me", { token }))).balance.amount;
}

async function events(accountId: string, type: string) {
  const rows = await env.DB.prepare("SELECT payload FROM events WHERE account_id = ? AND type = ? ORDER BY id")
    .bind(accountId, type)
    .all<{ payload: string }>();
  return rows.results.map((row) => JSON.parse(row.payload));
}

async function authorizeIsp(body: Record<string, unknown>) {
  return json(await gateway("/authorize", { product: "isp", source_ip: "198.51.100.5", ...body }));
}

describe("ISP batch lifecycle (spec §3.1, §3.6, §4.4) with a moved clock", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date"] });
    at(T0);
  });
  afterEach(() => vi.useRealTimers());

  it("order → provisioning → completed → IPs in three formats → replace (free, quota, billed) → refresh once → renew → expiry → grace → release", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { orderId, batchId, subuser } = await orderBatch(account, { quantity: 20 });
    expect(await balance(account.token)).toBe(880);

    // Provisioning finishes by cron after the configured delay (120 s for tier-1 countries).
    expect(await batchIps(account, batchId)).toEqual([]);
    await runCron(at(T0 + MINUTE));
    expect((await getBatch(account, batchId)).status).toBe("provisioning");
    await runCron(at(T0 + 2 * MINUTE + 1_000));
    await runCron(at(T0 + 3 * MINUTE)); // a repeated run changes nothing twice
    expect((await getBatch(account, batchId)).status).toBe("active");
    const order = await json(await call("GET", `/v1/orders/${orderId}`, { token: account.token }));
    expect(order.status).toBe("completed");
    // One order.completed event, the same shape as a bandwidth order's, whatever the runs.
    expect(await events(account.id, "order.completed")).toEqual([
      { order_id: orderId, product: "isp", total_usd: order.total_usd, batch_id: batchId },
    ]);

    // The IP list in its three formats, with the batch's user and password.
    const ips = await batchIps(account, batchId);
    expect(ips).toHaveLength(20);
    expect(new Set(ips.map((ip) => ip.ip)).size).toBe(20);
    const user = `user_${subuser.name}`;
    for (const ip of ips) expect(ip).toMatchObject({ port: 8000, user, country: "US", city: "newyork", asn: 7922 });
    const password = ips[0]!.pass;
    const plain = await (
      await call("GET", `/v1/isp/batches/${batchId}/ips?format=plain`, { token: account.token })
    ).text();
    expect(plain.split("\n")).toHaveLength(20);
    expect(plain.split("\n")[0]).toBe(`${ips[0]!.ip}:8000:${user}:${password}`);
    const csvResponse = await call("GET", `/v1/isp/batches/${batchId}/ips?format=csv`, { token: account.token });
    expect(csvResponse.headers.get("Content-Type")).toContain("text/csv");
    const csv = (await csvResponse.text()).split("\n");
    expect(csv[0]).toBe("ip,port,user,pass,country,city,asn");
    expect(csv[1]).toBe(`${ips[0]!.ip},8000,${user},${password},US,newyork,7922`);
    expect((await call("GET", `/v1/isp/batches/${batchId}/ips?format=xml`, { token: account.token })).status).toBe(422);

    // The gateway accepts the batch credentials on the batch's IPs.
    expect(await authorizeIsp({ username: user, password, dest_ip: ips[0]!.ip })).toMatchObject({
      allow: true,
      product: "isp",
      subuser: subuser.id,
      target: { type: "isp", ip: ips[0]!.ip, port: 8000, batch_id: batchId },
    });
    expect(await authorizeIsp({ username: user, password: "wrong", dest_ip: ips[0]!.ip })).toEqual({
      allow: false,
      status: 407,
      error_code: "auth-failed",
    });

    // Replacements: free within 14 days of purchase (not counted) …
    const replace = (ipId: string) =>
      call("POST", `/v1/isp/ips/${ipId}/replace`, { token: account.token, body: { reason: "blocked" } });
    const early = await json(await replace(ips[0]!.ip_id));
    expect(early).toMatchObject({ free: true, charged_usd: 0, replaced: { ip_id: ips[0]!.ip_id } });
    expect(early.ip.ip_id).not.toBe(ips[0]!.ip_id);
    expect(early.ip).toMatchObject({ country: "US", city: "newyork", asn: 7922 });
    expect((await getBatch(account, batchId)).replacements.used_this_period).toBe(0);
    expect(await authorizeIsp({ username: user, password, dest_ip: ips[0]!.ip })).toMatchObject({
      error_code: "ip-released",
    });

    // … then 10% of the batch (2 of 20) per period, then billed at the per-IP monthly rate (6.00).
    at(T0 + 15 * DAY);
    const current = await batchIps(account, batchId);
    expect((await json(await replace(current[0]!.ip_id))).free).toBe(true);
    expect((await json(await replace(current[1]!.ip_id))).free).toBe(true);
    const billed = await json(await replace(current[2]!.ip_id));
    expect(billed).toMatchObject({ free: false, charged_usd: 6 });
    expect(await balance(account.token)).toBe(874);
    expect(await batchIps(account, batchId)).toHaveLength(20);
    const log = await env.DB.prepare(
      "SELECT reason, free, charged_minor FROM ip_replacements WHERE batch_id = ? ORDER BY id",
    )
      .bind(batchId)
      .all();
    expect(log.results.map((r) => [r.reason, r.free, r.charged_minor])).toEqual([
      ["blocked", 1, 0],
      ["blocked", 1, 0],
      ["blocked", 1, 0],
      ["blocked", 0, 600],
    ]);

    // Refresh replaces every IP, once per billing period.
    const before = new Set((await batchIps(account, batchId)).map((ip) => ip.ip));
    const refreshed = await call("POST", `/v1/isp/batches/${batchId}/refresh`, { token: account.token });
    expect(refreshed.status).toBe(200);
    expect((await json(refreshed)).refresh_used_this_period).toBe(true);
    const after = (await batchIps(account, batchId)).map((ip) => ip.ip);
    expect(after).toHaveLength(20);
    expect(after.filter((ip) => before.has(ip))).toEqual([]);
    const again = await call("POST", `/v1/isp/batches/${batchId}/refresh`, { token: account.token });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("refresh_already_used");

    // Renew: same IPs and password, expires_at one month later, billed 20 × 6.00.
    const expiresBefore = (await getBatch(account, batchId)).expires_at;
    const renewed = await json(
      await call("POST", `/v1/isp/batches/${batchId}/renew`, { token: account.token, body: { months: 1 } }),
    );
    expect(renewed.expires_at).toBe(new Date(Date.UTC(2026, 2, 10, 12, 0, 0)).toISOString());
    expect(expiresBefore).toBe(new Date(Date.UTC(2026, 1, 10, 12, 0, 0)).toISOString());
    expect(renewed.refresh_used_this_period).toBe(false);
    expect((await batchIps(account, batchId)).map((ip) => ip.ip)).toEqual(after);
    expect((await batchIps(account, batchId))[0]!.pass).toBe(password);
    expect(await balance(account.token)).toBe(754);

    // Turn auto-renew off (cancel the ISP subscription), then let the period end: grace, then release.
    const subscription = await json(
      await call("POST", "/v1/subscriptions", {
        token: account.token,
        body: { product: "isp", batch_id: batchId, cycle: "monthly" },
      }),
    );
    await call("POST", `/v1/subscriptions/${subscription.id}/cancel`, { token: account.token });
    const expiresAt = Date.parse(renewed.expires_at);
    await runCron(at(expiresAt - 7 * DAY + MINUTE));
    await runCron(at(expiresAt - 3 * DAY + MINUTE));
    await runCron(at(expiresAt - 3 * DAY + 2 * MINUTE));
    const warnings = await events(account.id, "isp_batch.expiring");
    expect(warnings.map((w) => w.days_left)).toEqual([7, 3]);

    await runCron(at(expiresAt + MINUTE));
    const grace = await getBatch(account, batchId);
    expect(grace.status).toBe("grace");
    expect(grace.grace_until).toBe(new Date(expiresAt + 7 * DAY).toISOString());
    expect(await balance(account.token)).toBe(754); // no renewal charge
    expect(
      (await json(await call("GET", `/v1/subscriptions/${subscription.id}`, { token: account.token }))).status,
    ).toBe("cancelled");
    const firstIp = (await batchIps(account, batchId))[0]!.ip;
    expect(await authorizeIsp({ username: user, password, dest_ip: firstIp })).toMatchObject({
      status: 403,
      error_code: "ip-expired",
    });

    await runCron(at(expiresAt + 7 * DAY + MINUTE));
    expect((await getBatch(account, batchId)).status).toBe("released");
    expect(await batchIps(account, batchId)).toEqual([]);
    expect(await authorizeIsp({ username: user, password, dest_ip: firstIp })).toMatchObject({
      error_code: "ip-released",
    });
    const back = await env.DB.prepare("SELECT status, batch_id FROM isp_ips WHERE ip = ?").bind(firstIp).first();
    expect(back).toEqual({ status: "available", batch_id: null });
  });

  it("auto-renews at the end of the period exactly once, however many cron runs overlap", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { batchId } = await orderBatch(account, { quantity: 5 }, T0 + 3 * MINUTE);
    const expiresAt = Date.parse((await getBatch(account, batchId)).expires_at);
    expect(await balance(account.token)).toBe(970);
    const time = at(expiresAt + MINUTE);
    await Promise.all([runCron(time), runCron(time), runCron(time)]);
    await runCron(at(expiresAt + 2 * MINUTE));
    const batch = await getBatch(account, batchId);
    expect(batch.status).toBe("active");
    expect(batch.expires_at).toBe(new Date(Date.UTC(2026, 2, 10, 12, 0, 0)).toISOString());
    expect(await balance(account.token)).toBe(940);
  });

  it("goes into grace when the renewal cannot be paid, and can be renewed during grace", async () => {
    const account = await createAccount({ balance_usd: 30 });
    const { batchId, subuser } = await orderBatch(account, { quantity: 5 }, T0 + 3 * MINUTE);
    const expiresAt = Date.parse((await getBatch(account, batchId)).expires_at);
    await runCron(at(expiresAt + MINUTE));
    expect((await getBatch(account, batchId)).status).toBe("grace");
    const refused = await call("POST", `/v1/isp/batches/${batchId}/renew`, {
      token: account.token,
      body: { months: 1 },
    });
    expect((await json(refused)).code).toBe("insufficient_balance");
    await call("POST", `/internal/admin/accounts/${account.id}/credits`, {
      token: "test-admin-token",
      body: { amount_usd: 30 },
    });
    const renewed = await json(
      await call("POST", `/v1/isp/batches/${batchId}/renew`, { token: account.token, body: { months: 1 } }),
    );
    expect(renewed.status).toBe("active");
    expect(Date.parse(renewed.expires_at)).toBeGreaterThan(Date.now());
    const ip = (await batchIps(account, batchId))[0]!;
    expect((await authorizeIsp({ username: `user_${subuser.name}`, password: ip.pass, dest_ip: ip.ip })).allow).toBe(
      true,
    );
  });

  it("rotates the batch password: shown once, the old one works for 60 s at the gateway", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { batchId, subuser } = await orderBatch(account, { quantity: 5 }, T0 + 3 * MINUTE);
    const ip = (await batchIps(account, batchId))[0]!;
    at(T0 + 3 * MINUTE);
    const rotated = await json(
      await call("POST", `/v1/isp/batches/${batchId}/rotate-password`, { token: account.token }),
    );
    expect(rotated.password).not.toBe(ip.pass);
    expect((await batchIps(account, batchId))[0]!.pass).toBe(rotated.password);
    const username = `user_${subuser.name}`;
    at(T0 + 3 * MINUTE + 59_000);
    expect((await authorizeIsp({ username, password: ip.pass, dest_ip: ip.ip })).allow).toBe(true);
    at(T0 + 3 * MINUTE + 61_000);
    expect(await authorizeIsp({ username, password: ip.pass, dest_ip: ip.ip })).toMatchObject({
      error_code: "auth-failed",
    });
    expect((await authorizeIsp({ username, password: rotated.password, dest_ip: ip.ip })).allow).toBe(true);
  });

  it("batch whitelist: a whitelisted source may omit the password; same validation and errors as sub-user whitelists", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { batchId, subuser } = await orderBatch(account, { quantity: 5 }, T0 + 3 * MINUTE);
    const path = `/v1/isp/batches/${batchId}/whitelist`;
    const added = await call("POST", path, { token: account.token, body: { ip: "203.0.113.0/24", label: "office" } });
    expect(added.status).toBe(201);
    const entry = await json(added);
    expect(entry).toMatchObject({ batch_id: batchId, ip: "203.0.113.0/24", label: "office" });
    expect((await json(await call("POST", path, { token: account.token, body: { ip: "203.0.113.0/24" } }))).code).toBe(
      "already_whitelisted",
    );
    expect((await json(await call("POST", path, { token: account.token, body: { ip: "10.0.0.0/16" } }))).code).toBe(
      "invalid_cidr",
    );
    expect((await json(await call("POST", path, { token: account.token, body: { ip: "example.com" } }))).code).toBe(
      "invalid_request",
    );

    const ip = (await batchIps(account, batchId))[0]!.ip;
    const username = `user_${subuser.name}`;
    expect((await authorizeIsp({ username, dest_ip: ip, source_ip: "203.0.113.9" })).allow).toBe(true);
    expect(await authorizeIsp({ username, dest_ip: ip, source_ip: "198.51.100.1" })).toMatchObject({
      error_code: "not-whitelisted",
    });

    const listed = await json(await call("GET", path, { token: account.token }));
    expect(listed.data.map((e: { id: string }) => e.id)).toEqual([entry.id]);
    for (let i = 1; i < 50; i++) await call("POST", path, { token: account.token, body: { ip: `192.0.2.${i}` } });
    expect((await json(await call("POST", path, { token: account.token, body: { ip: "192.0.2.200" } }))).code).toBe(
      "over_limit",
    );

    expect((await call("DELETE", `${path}/${entry.id}`, { token: account.token })).status).toBe(200);
    expect(await authorizeIsp({ username, dest_ip: ip, source_ip: "203.0.113.9" })).toMatchObject({
      error_code: "not-whitelisted",
    });
  });

  it("DELETE releases the batch at once (no refund) and needs X-MFA-Code when MFA is on", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { batchId } = await orderBatch(account, { quantity: 5 }, T0 + 3 * MINUTE);
    const enrollment = await json(
      await call("POST", "/v1/users/me/security/mfa", { token: account.token, body: { method: "totp" } }),
    );
    const OTPAuth = await import("otpauth");
    const code = (time: number) =>
      new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enrollment.secret) }).generate({ timestamp: time });
    await call("POST", "/v1/users/me/security/mfa/verify", { token: account.token, body: { code: code(Date.now()) } });

    const withoutCode = await call("DELETE", `/v1/isp/batches/${batchId}`, { token: account.token });
    expect(withoutCode.status).toBe(403);
    expect((await json(withoutCode)).code).toBe("mfa_required");
    const time = at(T0 + 10 * MINUTE);
    const released = await call("DELETE", `/v1/isp/batches/${batchId}`, {
      token: account.token,
      headers: { "X-MFA-Code": code(time) },
    });
    expect(released.status).toBe(200);
    expect((await json(released)).status).toBe("released");
    expect(await balance(account.token)).toBe(970);
    expect(await batchIps(account, batchId)).toEqual([]);
  });

  it("another account's batch or IP answers 404 not_found", async () => {
    const owner = await createAccount({ balance_usd: 1000 });
    const { batchId } = await orderBatch(owner, { quantity: 5 }, T0 + 3 * MINUTE);
    const ip = (await batchIps(owner, batchId))[0]!;
    const stranger = await createAccount();
    for (const [method, path, body] of [
      ["GET", `/v1/isp/batches/${batchId}`, undefined],
      ["GET", `/v1/isp/batches/${batchId}/ips`, undefined],
      ["POST", `/v1/isp/batches/${batchId}/renew`, { months: 1 }],
      ["POST", `/v1/isp/batches/${batchId}/refresh`, undefined],
      ["DELETE", `/v1/isp/batches/${batchId}`, undefined],
      ["GET", `/v1/isp/batches/${batchId}/whitelist`, undefined],
      ["POST", `/v1/isp/ips/${ip.ip_id}/replace`, { reason: "x" }],
    ] as const) {
      const response = await call(method, path, { token: stranger.token, body });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await json(response)).code).toBe("not_found");
    }
    expect((await json(await call("GET", "/v1/isp/batches", { token: stranger.token }))).data).toEqual([]);
  });
});

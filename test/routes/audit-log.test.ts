import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { auditActions } from "../../src/domain/audit/audit-log";
import { createAccount, issueKey, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, env, json } from "../helpers/http";
import { sandboxOf } from "../helpers/sandbox";
import { createSubuser } from "../helpers/subusers";
import { eventually } from "../helpers/usage";

type Entry = Record<string, any>;

async function auditLog(account: { token: string }, query = ""): Promise<Entry[]> {
  const response = await call("GET", `/v1/audit-events${query}`, { token: account.token });
  expect(response.status).toBe(200);
  return (await json(response)).data;
}

async function actionsOf(account: TestAccount, query = ""): Promise<string[]> {
  return (await auditLog(account, query)).map((entry) => entry.action);
}

async function ok(method: string, path: string, token: string, body?: unknown): Promise<Entry> {
  const response = await call(method, path, { token, body });
  expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
  return response.status === 204 ? {} : json(response);
}

/** A sandbox account's live sticky session, once the account's session index has it (through the usage pipeline). */
async function sandboxSession(sessionId: string) {
  const sandbox = await sandboxOf(await createAccount());
  await ok("POST", "/v1/test-helpers/balance/top-up", sandbox.token, { amount_usd: 20 });
  await ok("POST", "/v1/orders", sandbox.token, { product: "residential", gb: 1 });
  const subuser = await createSubuser(sandbox);
  const session = await ok("POST", "/v1/test-helpers/sessions", sandbox.token, {
    subuser: subuser.id,
    session_id: sessionId,
    sesstime: 10,
  });
  const path = `/v1/residential/sessions/${session.id}`;
  await eventually(
    () => call("GET", path, { token: sandbox.token }),
    (response) => response.status === 200,
  );
  return { sandbox, subuser, session, path };
}

describe("the audit log", () => {
  it("records a sub-user's life — created, updated, password rotated, deleted — with actor, source IP, request id and the changed fields, never a secret", async () => {
    const account = await createAccount();
    const created = await call("POST", "/v1/subusers", {
      token: account.token,
      headers: { "CF-Connecting-IP": "203.0.113.9" },
      body: { label: "scraper", products: ["residential"] },
    });
    const subuser = await json(created);
    await ok("PATCH", `/v1/subusers/${subuser.id}`, account.token, { label: "scraper-2", rps_max: 5 });
    await ok("POST", `/v1/subusers/${subuser.id}/rotate-password`, account.token);
    await ok("DELETE", `/v1/subusers/${subuser.id}`, account.token);

    const entries = await auditLog(account, `?resource=${subuser.id}`);
    expect(entries.map((entry) => entry.action)).toEqual([
      "subuser.deleted",
      "subuser.password_rotated",
      "subuser.updated",
      "subuser.created",
    ]);
    const [deleted, rotated, updated, creation] = entries as [Entry, Entry, Entry, Entry];
    expect(creation).toMatchObject({
      id: expect.stringMatching(/^aud_/),
      resource_type: "subuser",
      resource_id: subuser.id,
      products: ["residential"],
      actor_key: account.keyId,
      source_ip: "203.0.113.9",
      request_id: created.headers.get("X-Request-Id"),
      changes: { label: "scraper", products: ["residential"], status: "active", password: "[redacted]" },
      previous: null,
    });
    expect(updated.changes).toEqual({ label: "scraper-2", rps_max: 5 });
    expect(updated.previous).toEqual({ label: "scraper", rps_max: subuser.rps_max });
    expect(rotated.changes).toMatchObject({ password: "[redacted]" });
    expect(deleted.changes).toEqual({ deleted_at: expect.any(String) });
    // No secret's value, hash or seal is ever in the log.
    expect(JSON.stringify(entries)).not.toContain(subuser.password);
    expect(JSON.stringify(entries)).not.toMatch(/hash|sealed/i);
  });

  it("records every kind of change a key makes across the API, and an operator's as actor `admin`", async () => {
    const account = await createAccount({ plan: "pro", balance_usd: 500 });
    const t = account.token;
    await ok("PATCH", "/v1/users/me", t, { company: "Acme" });
    const subuser = await createSubuser(account, { products: ["residential"] });
    const entry = await ok("POST", "/v1/whitelists", t, {
      subuser: subuser.id,
      product: "residential",
      ip: "198.51.100.4",
    });
    await ok("DELETE", `/v1/whitelists/${entry.id}`, t);
    await ok("POST", "/v1/orders", t, { product: "residential", gb: 1 });
    const subscription = await ok("POST", "/v1/subscriptions", t, {
      product: "residential",
      plan: "starter",
      cycle: "monthly",
    });
    await ok("POST", `/v1/subscriptions/${subscription.id}/pause`, t);
    await ok("POST", `/v1/subscriptions/${subscription.id}/cancel`, t);
    const report = await ok("POST", "/v1/reports", t, {
      name: "Usage",
      type: "subusers",
      format: "csv",
      destination: { type: "email", email: "ops@example.com" },
    });
    await ok("PATCH", `/v1/reports/${report.id}`, t, { name: "Usage 2" });
    await ok("DELETE", `/v1/reports/${report.id}`, t);
    const endpoint = await ok("POST", "/v1/webhook-endpoints", t, {
      url: "https://hooks.example.com/a",
      events: ["order.completed"],
    });
    await ok("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, t, { description: "billing" });
    await ok("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, t);
    await ok("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, t);
    const key = await ok("POST", "/v1/api-keys", t, { name: "exporter" });
    await ok("PATCH", `/v1/api-keys/${key.id}`, t, { name: "exporter-2" });
    await ok("POST", `/v1/api-keys/${key.id}/rotate`, t, { grace_seconds: 0 });
    await ok("DELETE", `/v1/api-keys/${key.id}`, t);
    expect((await admin("PATCH", `/accounts/${account.id}`, { kyc_status: "approved" })).status).toBe(200);
    expect((await admin("POST", `/accounts/${account.id}/credits`, { amount_usd: 5 })).status).toBeLessThan(300);

    const actions = await actionsOf(account, "?limit=200");
    for (const action of [
      "account.updated",
      "subuser.created",
      "whitelist_entry.created",
      "whitelist_entry.deleted",
      "order.created",
      "subscription.created",
      "subscription.paused",
      "subscription.canceled",
      "report.created",
      "report.updated",
      "report.deleted",
      "webhook_endpoint.created",
      "webhook_endpoint.updated",
      "webhook_endpoint.secret_rotated",
      "webhook_endpoint.deleted",
      "api_key.created",
      "api_key.updated",
      "api_key.rotated",
      "api_key.revoked",
      "account.credited",
    ]) {
      expect(actions, action).toContain(action);
    }
    // Operators act as `admin`: the account's creation, its first key, the KYC change and the credit.
    const byAdmin = await auditLog(account, "?actor_key=admin");
    expect(byAdmin.map((e) => e.action)).toEqual([
      "account.credited",
      "account.updated",
      "api_key.created",
      "account.created",
    ]);
    expect(byAdmin[1]).toMatchObject({ actor_key: "admin", changes: { kyc_status: "approved" } });
    expect((await auditLog(account, `?actor_key=${account.keyId}&action=account.updated`))[0]).toMatchObject({
      changes: { company: "Acme" },
      previous: { company: null },
    });
    // Reading changes nothing: a GET leaves no entry.
    const count = actions.length;
    await ok("GET", `/v1/subusers/${subuser.id}`, t);
    expect(await actionsOf(account, "?limit=200")).toHaveLength(count);
    // Every action the log can hold is in its documented list.
    for (const action of actions) expect(auditActions).toContain(action);
  });

  it("writes nothing for a change that did not commit: an order refused for want of balance, a whitelist over its limit", async () => {
    const account = await createAccount({ balance_usd: 0 });
    const refused = await call("POST", "/v1/orders", { token: account.token, body: { product: "residential", gb: 1 } });
    expect(refused.status).toBe(409);
    const subuser = await createSubuser(account);
    for (let i = 0; i < 50; i++) {
      const ip = `198.51.100.${i}`;
      await ok("POST", "/v1/whitelists", account.token, { subuser: subuser.id, product: "residential", ip });
    }
    const over = await call("POST", "/v1/whitelists", {
      token: account.token,
      body: { subuser: subuser.id, product: "residential", ip: "198.51.100.200" },
    });
    expect(over.status).toBe(422);
    expect(await actionsOf(account, "?action=order.created")).toEqual([]);
    expect(await auditLog(account, "?action=whitelist_entry.created&limit=200")).toHaveLength(50);
  });

  it("an idempotent retry replays the change and records it once", async () => {
    const account = await createAccount();
    const headers = { "Idempotency-Key": "create-once" };
    const body = { label: "once", products: ["residential"] };
    const [first, second] = await Promise.all([
      call("POST", "/v1/subusers", { token: account.token, body, headers }),
      call("POST", "/v1/subusers", { token: account.token, body, headers }),
    ]);
    expect([first.status, second.status]).toContain(201);
    await call("POST", "/v1/subusers", { token: account.token, body, headers });
    expect(await actionsOf(account, "?action=subuser.created")).toEqual(["subuser.created"]);
  });

  it("filters by resource type or id, actor key, action and time, pages with a cursor, and refuses unknown filters with 422", async () => {
    const account = await createAccount();
    const a = await createSubuser(account);
    const b = await createSubuser(account);
    await ok("PATCH", `/v1/subusers/${a.id}`, account.token, { label: "renamed-a" });
    expect((await auditLog(account, "?resource=subuser")).map((e) => e.resource_id)).toEqual([a.id, b.id, a.id]);
    expect((await auditLog(account, `?resource=${b.id}`)).map((e) => e.action)).toEqual(["subuser.created"]);
    expect(await actionsOf(account, "?action=subuser.updated")).toEqual(["subuser.updated"]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await auditLog(account, `?from=${future}`)).toEqual([]);
    expect(await auditLog(account, "?to=2020-01-01")).toEqual([]);
    expect((await auditLog(account, `?to=${future}&resource=subuser`)).length).toBe(3);

    const page1 = await json(await call("GET", "/v1/audit-events?resource=subuser&limit=2", { token: account.token }));
    expect(page1.data).toHaveLength(2);
    const page2 = await json(
      await call("GET", `/v1/audit-events?resource=subuser&limit=2&cursor=${page1.next_cursor}`, {
        token: account.token,
      }),
    );
    expect(page2.data.map((e: Entry) => e.resource_id)).toEqual([a.id]);
    expect(page2.next_cursor).toBeNull();

    for (const query of ["?resource=nonsense", "?action=subuser.exploded", "?actor_key=bob", "?from=yesterday"]) {
      const response = await call("GET", `/v1/audit-events${query}`, { token: account.token });
      expect(response.status, query).toBe(422);
      expect((await json(response)).code).toBe("invalid_request");
    }
  });

  it("is the account's own: another account's ids find nothing, and a product-scoped key sees account-wide entries and its products' only", async () => {
    const account = await createAccount({ plan: "starter" });
    const stranger = await createAccount();
    const residential = await createSubuser(account, { products: ["residential"] });
    const mobile = await createSubuser(account, { products: ["mobile"] });
    expect(await auditLog(stranger, `?resource=${residential.id}`)).toEqual([]);
    expect(JSON.stringify(await auditLog(stranger, "?limit=200"))).not.toContain(residential.id);

    const endpoint = await ok("POST", "/v1/webhook-endpoints", account.token, {
      url: "https://hooks.example.com/audit",
      events: ["order.completed"],
    });

    const scoped = await issueKey(account.id, ["residential"]);
    const seen = (await auditLog(scoped, "?limit=200")).map((e) => e.resource_id);
    expect(seen).toContain(residential.id);
    expect(seen).not.toContain(mobile.id);
    expect(seen).toContain(account.id);
    // Webhooks span every product, so a product-scoped key may not read them (403): nor their entries.
    expect((await call("GET", `/v1/webhook-endpoints/${endpoint.id}`, { token: scoped.token })).status).toBe(403);
    expect(seen).not.toContain(endpoint.id);
    expect(await auditLog(scoped, "?resource=webhook_endpoint")).toEqual([]);
  });

  it("needs the account:read scope", async () => {
    const account = await createAccount();
    const key = await ok("POST", "/v1/api-keys", account.token, { scopes: { billing: "read" } });
    const refused = await call("GET", "/v1/audit-events", { token: key.token });
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: "insufficient_scope" });
    const reader = await ok("POST", "/v1/api-keys", account.token, { scopes: { account: "read" } });
    expect((await call("GET", "/v1/audit-events", { token: reader.token })).status).toBe(200);
  });

  it("records a session's termination once, however often it is asked (a session lives outside D1)", async () => {
    const { sandbox, session, path } = await sandboxSession("audit1");
    await ok("DELETE", path, sandbox.token);
    await ok("DELETE", path, sandbox.token);
    const entries = await auditLog(sandbox, `?resource=${session.id}`);
    expect(entries.map((e) => e.action)).toEqual(["session.terminated"]);
    expect(entries[0]).toMatchObject({ products: ["residential"], changes: { status: "terminated" } });
  });

  it("a termination whose gate was never told (a crash after its entry) is finished by the cron; one of a session gone meanwhile is withdrawn", async () => {
    const { sandbox, subuser, session, path } = await sandboxSession("crash1");
    expect((await json(await call("GET", path, { token: sandbox.token }))).status).toBe("active");
    // What a worker that died right after its D1 batch leaves: the request and its entry, the gate untold.
    const requestedAt = Date.now() - 120_000;
    const gateName = subuser.name;
    const crashed = [
      [session.id, requestedAt],
      ["ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", requestedAt],
    ] as const;
    for (const [sessionId, at] of crashed) {
      const entryId = `aud_${ulid(at).slice(0, 10)}${sessionId.slice(-16)}`;
      await env.DB.batch([
        env.DB.prepare(
          "INSERT INTO session_terminations (session_id, account_id, gate_name, requested_at) VALUES (?, ?, ?, ?)",
        ).bind(sessionId, sandbox.id, gateName, at),
        env.DB.prepare(
          `INSERT INTO audit_events (id, account_id, actor_key_id, source_ip, request_id, action, resource_type,
             resource_id, products, changes, previous, created_at)
           VALUES (?, ?, ?, NULL, 'req_crash', 'session.terminated', 'session', ?, '["residential"]', NULL, NULL, ?)`,
        ).bind(entryId, sandbox.id, sandbox.keyId, sessionId, at),
      ]);
    }
    await runCron(Date.now());
    expect(await json(await call("GET", path, { token: sandbox.token }))).toMatchObject({ status: "terminated" });
    expect((await auditLog(sandbox, `?resource=${session.id}`)).map((e) => e.action)).toEqual(["session.terminated"]);
    // The other request named a session the gate does not have: it was not terminated, so no entry says it was.
    expect(await auditLog(sandbox, `?resource=${crashed[1][0]}`)).toEqual([]);
  });

  it("keeps entries a year: the cron prunes older ones", async () => {
    const account = await createAccount();
    const recent = await createSubuser(account);
    const yearAndADay = Date.now() - 366 * 86_400_000;
    await env.DB.prepare(
      `INSERT INTO audit_events (id, account_id, actor_key_id, source_ip, request_id, action, resource_type,
         resource_id, products, changes, previous, created_at)
       VALUES (?, ?, NULL, NULL, 'req_old', 'subuser.created', 'subuser', 'sub_old', NULL, NULL, NULL, ?)`,
    )
      .bind(`aud_${ulid(yearAndADay)}`, account.id, yearAndADay)
      .run();
    expect((await auditLog(account, "?resource=subuser")).map((e) => e.resource_id)).toContain("sub_old");
    await runCron(Date.now());
    expect((await auditLog(account, "?resource=subuser")).map((e) => e.resource_id)).toEqual([recent.id]);
  });
});

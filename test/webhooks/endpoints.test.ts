import { describe, expect, it } from "vitest";
import { createAccount, issueKey } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { createEndpoint, receiverUrl } from "./helpers";

const UNKNOWN_ENDPOINT = "whe_00000000000000000000000000";

describe("POST /v1/webhook-endpoints", () => {
  it("creates an enabled endpoint and shows its whsec_ secret once, with Cache-Control: no-store", async () => {
    const account = await createAccount({ plan: "starter" });
    const url = receiverUrl();
    const response = await call("POST", "/v1/webhook-endpoints", {
      token: account.token,
      body: { url, events: ["order.completed", "traffic.threshold"], description: "Billing sync" },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const body = await json(response);
    expect(body.id).toMatch(/^whe_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body).toMatchObject({
      url,
      events: ["order.completed", "traffic.threshold"],
      description: "Billing sync",
      status: "enabled",
      disabled_reason: null,
      previous_secret_expires_at: null,
    });
  });

  it("never shows the secret again and stores it sealed, not in clear", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account);
    const got = await call("GET", `/v1/webhook-endpoints/${endpoint.id}`, { token: account.token });
    expect(got.headers.get("Cache-Control")).toBeNull();
    expect((await json(got)).secret).toBeUndefined();
    const listed = await call("GET", "/v1/webhook-endpoints", { token: account.token });
    const patched = await call("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, {
      token: account.token,
      body: { description: "x" },
    });
    for (const response of [listed, patched]) expect(await response.text()).not.toContain(endpoint.secret);
    const row = await env.DB.prepare("SELECT * FROM webhook_endpoints WHERE id = ?").bind(endpoint.id).first();
    expect(JSON.stringify(row)).not.toContain(endpoint.secret.slice(6));
    expect(row?.secret_sealed).toMatch(/^v1\./);
  });

  const ok = { url: "https://a.receiver.test/", events: ["*"] };
  it.each([
    ["no url", { events: ["*"] }, "url"],
    ["a url that is not one", { ...ok, url: "not a url" }, "url"],
    ["a url over 2048 characters", { ...ok, url: `https://a.receiver.test/${"x".repeat(2050)}` }, "url"],
    ["no events", { ...ok, events: [] }, "events"],
    ["an unknown event type", { ...ok, events: ["order.created"] }, "events.0"],
    ["a repeated event type", { ...ok, events: ["order.completed", "order.completed"] }, "events"],
    ["a description over 200 characters", { ...ok, description: "d".repeat(201) }, "description"],
    ["a field of its own", { ...ok, secret: "whsec_mine" }, "secret"],
  ])("rejects %s with 422 invalid_request naming the field", async (_label, body, field) => {
    const account = await createAccount();
    const response = await call("POST", "/v1/webhook-endpoints", { token: account.token, body });
    expect(response.status).toBe(422);
    const error = await json(response);
    expect(error.code).toBe("invalid_request");
    expect(error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it.each([
    "http://hooks.example.com/",
    "https://user:pw@hooks.example.com/",
    "https://127.0.0.1/hook",
    "http://127.0.0.1:8787/hook",
    "https://169.254.169.254/latest/meta-data/",
    "https://10.0.0.8/",
    "https://[::1]/",
    "https://localhost/",
    "https://metadata.google.internal/",
  ])("refuses %s with 422 webhook_url_not_allowed, on create and on PATCH", async (url) => {
    const account = await createAccount();
    const created = await call("POST", "/v1/webhook-endpoints", { token: account.token, body: { url, events: ["*"] } });
    expect(created.status).toBe(422);
    const error = await json(created);
    expect(error).toMatchObject({ code: "webhook_url_not_allowed", details: [{ field: "url" }] });
    const endpoint = await createEndpoint(account);
    const patched = await call("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, {
      token: account.token,
      body: { url },
    });
    expect(patched.status).toBe(422);
    expect((await json(patched)).code).toBe("webhook_url_not_allowed");
  });

  it("allows at most 16 endpoints per account (422 webhook_endpoint_limit), another account is not affected", async () => {
    const account = await createAccount();
    await Promise.all(Array.from({ length: 16 }, () => createEndpoint(account)));
    const over = await call("POST", "/v1/webhook-endpoints", {
      token: account.token,
      body: { url: receiverUrl(), events: ["*"] },
    });
    expect(over.status).toBe(422);
    expect((await json(over)).code).toBe("webhook_endpoint_limit");
    expect((await createEndpoint(await createAccount())).id).toMatch(/^whe_/);
  });
});

describe("GET, PATCH, DELETE /v1/webhook-endpoints/{id}", () => {
  it("lists the account's endpoints newest first, cursor-paged", async () => {
    const account = await createAccount();
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createEndpoint(account));
    const first = await json(await call("GET", "/v1/webhook-endpoints?limit=2", { token: account.token }));
    expect(first.data.map((e: { id: string }) => e.id)).toEqual([created[2]?.id, created[1]?.id]);
    const second = await json(
      await call("GET", `/v1/webhook-endpoints?limit=2&cursor=${first.next_cursor}`, { token: account.token }),
    );
    expect(second).toMatchObject({ data: [{ id: created[0]?.id }], next_cursor: null });
  });

  it("PATCH changes url, events and description; disabling records why, enabling clears it", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account);
    const url = receiverUrl("/v2");
    const patch = (body: unknown) =>
      call("PATCH", `/v1/webhook-endpoints/${endpoint.id}`, { token: account.token, body });
    expect(await json(await patch({ url, events: ["isp_batch.expiring"], description: null }))).toMatchObject({
      url,
      events: ["isp_batch.expiring"],
      description: null,
      status: "enabled",
    });
    expect(await json(await patch({ status: "disabled" }))).toMatchObject({
      status: "disabled",
      disabled_reason: "manual",
    });
    expect(await json(await patch({ status: "enabled" }))).toMatchObject({ status: "enabled", disabled_reason: null });
    const bad = await patch({ status: "paused" });
    expect(bad.status).toBe(422);
  });

  it("DELETE removes the endpoint and its delivery log", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account);
    await call("POST", `/v1/webhook-endpoints/${endpoint.id}/test`, { token: account.token });
    const deleted = await call("DELETE", `/v1/webhook-endpoints/${endpoint.id}`, { token: account.token });
    expect(await json(deleted)).toMatchObject({ id: endpoint.id, deleted: true });
    const again = await call("GET", `/v1/webhook-endpoints/${endpoint.id}`, { token: account.token });
    expect(again.status).toBe(404);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?")
      .bind(endpoint.id)
      .first();
    expect(rows?.n).toBe(0);
  });

  it("POST …/rotate-secret returns a new secret once, the previous one overlapping for 24 hours", async () => {
    const account = await createAccount();
    const endpoint = await createEndpoint(account);
    const before = Date.now();
    const response = await call("POST", `/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { token: account.token });
    expect(response.status).toBe(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const rotated = await json(response);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    const overlapEnds = Date.parse(rotated.previous_secret_expires_at);
    expect(overlapEnds).toBeGreaterThanOrEqual(before + 24 * 3600_000);
    expect(overlapEnds).toBeLessThan(Date.now() + 24 * 3600_000 + 1000);
  });
});

describe("who may use webhook endpoints", () => {
  const routes = (id: string) =>
    [
      ["GET", "/v1/webhook-endpoints", undefined],
      ["POST", "/v1/webhook-endpoints", { url: receiverUrl(), events: ["*"] }],
      ["GET", `/v1/webhook-endpoints/${id}`, undefined],
      ["PATCH", `/v1/webhook-endpoints/${id}`, { description: "x" }],
      ["DELETE", `/v1/webhook-endpoints/${id}`, undefined],
      ["POST", `/v1/webhook-endpoints/${id}/rotate-secret`, undefined],
      ["POST", `/v1/webhook-endpoints/${id}/test`, undefined],
      ["GET", `/v1/webhook-endpoints/${id}/deliveries`, undefined],
      ["POST", `/v1/webhook-endpoints/${id}/deliveries/whd_00000000000000000000000000/retry`, undefined],
    ] as const;

  it("another account's endpoint id answers 404 webhook_endpoint_not_found on every route, like an unknown id", async () => {
    const owner = await createAccount();
    const endpoint = await createEndpoint(owner);
    const stranger = await createAccount();
    for (const id of [endpoint.id, UNKNOWN_ENDPOINT, "not-an-id"]) {
      for (const [method, path, body] of routes(id).slice(2)) {
        const response = await call(method, path, { token: stranger.token, body });
        expect([method, path, response.status]).toEqual([method, path, 404]);
        expect((await json(response)).code).toBe("webhook_endpoint_not_found");
      }
    }
    const still = await call("GET", `/v1/webhook-endpoints/${endpoint.id}`, { token: owner.token });
    expect((await json(still)).description).toBeNull();
  });

  it("the trial plan gets 403 feature_not_in_plan on every webhook route", async () => {
    const trial = await createAccount({ plan: "trial" });
    for (const [method, path, body] of routes(UNKNOWN_ENDPOINT)) {
      const response = await call(method, path, { token: trial.token, body });
      expect([method, path, response.status]).toEqual([method, path, 403]);
      expect((await json(response)).code).toBe("feature_not_in_plan");
    }
  });

  it("a product-scoped key gets 403 subuser_scope_mismatch: endpoints receive every product's events", async () => {
    const account = await createAccount();
    const scoped = await issueKey(account.id, ["isp"]);
    for (const [method, path, body] of routes(UNKNOWN_ENDPOINT)) {
      const response = await call(method, path, { token: scoped.token, body });
      expect([method, path, response.status]).toEqual([method, path, 403]);
      expect((await json(response)).code).toBe("subuser_scope_mismatch");
    }
  });
});

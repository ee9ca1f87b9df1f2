import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";

describe("platform conventions", () => {
  it("puts a req_ request id on every response, matching the error body's", async () => {
    const ok = await call("GET", "/healthz");
    expect(ok.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    const error = await call("GET", "/v1/users/me");
    const body = await json(error);
    expect(Object.keys(body).sort()).toEqual(["code", "message", "request_id"]);
    expect(error.headers.get("X-Request-Id")).toBe(body.request_id);
  });

  it("answers an unknown route with 404 not_found and a wrong method with 405 and Allow", async () => {
    const account = await createAccount();
    const missing = await call("GET", "/v1/nothing-here", { token: account.token });
    expect(missing.status).toBe(404);
    expect((await json(missing)).code).toBe("not_found");

    const wrongMethod = await call("PUT", "/v1/users/me", { token: account.token, body: {} });
    expect(wrongMethod.status).toBe(405);
    expect((await json(wrongMethod)).code).toBe("method_not_allowed");
    expect(wrongMethod.headers.get("Allow")).toContain("GET");
  });

  it("answers malformed JSON with 400 invalid_json, and a non-JSON body the same", async () => {
    const account = await createAccount();
    const malformed = await call("PATCH", "/v1/users/me", { token: account.token, body: "{not json" });
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).code).toBe("invalid_json");
    const form = await call("PATCH", "/v1/users/me", {
      token: account.token,
      body: "company=x",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(form.status).toBe(400);
    expect((await json(form)).code).toBe("invalid_json");
  });

  it("never leaks internals: a 422 names the field, not a stack", async () => {
    const account = await createAccount();
    const response = await call("PATCH", "/v1/users/me", { token: account.token, body: { company: 42 } });
    const body = await json(response);
    expect(response.status).toBe(422);
    expect(body.code).toBe("invalid_request");
    expect(body.message).toMatch(/^company: /);
    expect(body.details).toEqual([{ field: "company", message: expect.any(String) }]);
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts|ZodError/);
  });
});

describe("OpenAPI document, docs page and Postman collection", () => {
  it("serves an OpenAPI 3.1 document without a token, covering every route of the app", async () => {
    const response = await call("GET", "/v1/openapi.json");
    expect(response.status).toBe(200);
    const document = await json(response);
    expect(document.openapi).toBe("3.1.0");
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${path}`);
    }
    for (const expected of [
      "GET /v1/users/me",
      "PATCH /v1/users/me",
      "GET /v1/users/me/security",
      "POST /v1/users/me/security/mfa",
      "POST /v1/users/me/security/mfa/verify",
      "DELETE /v1/users/me/security/mfa",
      "GET /v1/postman/collection.json",
      "GET /v1/subusers",
      "POST /v1/subusers",
      "GET /v1/subusers/{id}",
      "PATCH /v1/subusers/{id}",
      "POST /v1/subusers/{id}/rotate-password",
      "DELETE /v1/subusers/{id}",
      "GET /v1/whitelists",
      "POST /v1/whitelists",
      "DELETE /v1/whitelists/{id}",
      "POST /v1/orders",
      "GET /v1/orders",
      "GET /v1/orders/{id}",
      "GET /v1/{product}/balance",
      "GET /v1/isp/inventory",
      "GET /v1/isp/batches",
      "GET /v1/isp/batches/{id}",
      "GET /v1/isp/batches/{id}/ips",
      "POST /v1/isp/batches/{id}/refresh",
      "POST /v1/isp/batches/{id}/renew",
      "POST /v1/isp/batches/{id}/rotate-password",
      "DELETE /v1/isp/batches/{id}",
      "POST /v1/isp/ips/{ip_id}/replace",
      "GET /v1/isp/batches/{id}/whitelist",
      "POST /v1/isp/batches/{id}/whitelist",
      "DELETE /v1/isp/batches/{id}/whitelist/{entry_id}",
      "GET /v1/subscriptions",
      "POST /v1/subscriptions",
      "GET /v1/subscriptions/{id}",
      "PATCH /v1/subscriptions/{id}",
      "POST /v1/subscriptions/{id}/pause",
      "POST /v1/subscriptions/{id}/cancel",
      "GET /internal/admin/prices",
      "PUT /internal/admin/prices/bandwidth/{product}",
      "PUT /internal/admin/prices/isp/{country}/{asn}",
      "PUT /internal/admin/prices/tiers/{product}/{plan}",
      "PUT /internal/admin/accounts/{id}/custom-tiers/{product}",
      "POST /internal/gateway/authorize",
      "POST /internal/gateway/release",
      "POST /internal/admin/accounts",
      "GET /internal/admin/accounts",
      "GET /internal/admin/accounts/{id}",
      "PATCH /internal/admin/accounts/{id}",
      "POST /internal/admin/accounts/{id}/credits",
      "POST /internal/admin/accounts/{id}/api-keys",
      "GET /internal/admin/accounts/{id}/api-keys",
      "DELETE /internal/admin/api-keys/{id}",
    ]) {
      expect(documented, expected).toContain(expected);
    }
    const patchMe = document.paths["/v1/users/me"].patch;
    expect(patchMe.responses["422"].description).toContain("invalid_billing_address");
    expect(patchMe.responses["429"].description).toContain("rate_limited");
    expect(document.components.securitySchemes.ApiKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.paths["/internal/admin/accounts"].post.tags).toEqual(["Internal: admin"]);
    expect(document.paths["/internal/gateway/authorize"].post.tags).toEqual(["Internal: gateway"]);
    expect(document.paths["/v1/subusers"].post.responses["409"].description).toContain("label_taken");
  });

  it("serves a docs page whose assets come from the worker itself", async () => {
    const response = await call("GET", "/v1/docs");
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("/v1/openapi.json");
    expect(html).not.toMatch(/src="https?:\/\//);
    expect(html).not.toMatch(/href="https?:\/\//);
    expect(html).toContain('src="/docs-assets/swagger-ui-bundle.js"');
  });

  it("derives the Postman collection from the OpenAPI document (public routes only)", async () => {
    const account = await createAccount();
    const response = await call("GET", "/v1/postman/collection.json", { token: account.token });
    expect(response.status).toBe(200);
    const collection = await json(response);
    expect(collection.info.schema).toContain("v2.1.0");
    const names = collection.item.flatMap((folder: { item: Array<{ name: string }> }) =>
      folder.item.map((i) => i.name),
    );
    expect(names).toContain("Get the account");
    expect(JSON.stringify(collection)).not.toContain("/internal/");
  });
});

import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { ADMIN_TOKEN, call, GATEWAY_TOKEN, json } from "../helpers/http";

describe("platform conventions", () => {
  it("puts a req_ request id on every response, matching the error body's", async () => {
    const ok = await call("GET", "/healthz");
    expect(ok.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    const error = await call("GET", "/v1/users/me");
    const body = await json(error);
    expect(Object.keys(body).sort()).toEqual(["code", "doc_url", "message", "request_id"]);
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

function operationsOf(document: Record<string, any>): Set<string> {
  const operations = new Set<string>();
  for (const [path, methods] of Object.entries<Record<string, unknown>>(document.paths)) {
    for (const method of Object.keys(methods)) operations.add(`${method.toUpperCase()} ${path}`);
  }
  return operations;
}

describe("internal routers share the JSON-body rule and the error catalogue", () => {
  it("a write with a non-JSON media type is 400 invalid_json on the admin and gateway routers, never a 500", async () => {
    for (const [path, token] of [
      ["/internal/admin/accounts", ADMIN_TOKEN],
      ["/internal/gateway/authorize", GATEWAY_TOKEN],
    ] as const) {
      const response = await call("POST", path, { token, body: "a=1", headers: { "Content-Type": "text/plain" } });
      expect(response.status, path).toBe(400);
      expect((await json(response)).code).toBe("invalid_json");
    }
  });
});

describe("OpenAPI document, docs page and Postman collection", () => {
  it("serves the public OpenAPI 3.1 document without a token: every /v1 route and nothing internal", async () => {
    const response = await call("GET", "/v1/openapi.json");
    expect(response.status).toBe(200);
    const document = await json(response);
    expect(document.openapi).toBe("3.1.0");
    expect(document.servers[0].url).toBe("https://api.test/v1");
    const documented = operationsOf(document);
    for (const expected of [
      "GET /users/me",
      "PATCH /users/me",
      "GET /users/me/security",
      "POST /users/me/security/mfa",
      "POST /users/me/security/mfa/verify",
      "DELETE /users/me/security/mfa",
      "GET /subusers",
      "POST /subusers",
      "GET /subusers/{id}",
      "PATCH /subusers/{id}",
      "POST /subusers/{id}/rotate-password",
      "DELETE /subusers/{id}",
      "GET /whitelists",
      "POST /whitelists",
      "DELETE /whitelists/{id}",
      "POST /orders",
      "GET /orders",
      "GET /orders/{id}",
      "GET /{product}/balance",
      "GET /isp/inventory",
      "GET /isp/batches",
      "GET /isp/batches/{id}",
      "GET /isp/batches/{id}/ips",
      "POST /isp/batches/{id}/refresh",
      "POST /isp/batches/{id}/renew",
      "POST /isp/batches/{id}/rotate-password",
      "DELETE /isp/batches/{id}",
      "POST /isp/ips/{ip_id}/replace",
      "GET /isp/batches/{id}/whitelist",
      "POST /isp/batches/{id}/whitelist",
      "DELETE /isp/batches/{id}/whitelist/{entry_id}",
      "GET /subscriptions",
      "POST /subscriptions",
      "GET /subscriptions/{id}",
      "PATCH /subscriptions/{id}",
      "POST /subscriptions/{id}/pause",
      "POST /subscriptions/{id}/cancel",
    ]) {
      expect(documented, expected).toContain(expected);
    }
    expect(
      [...documented].filter((operation) => operation.includes("/internal") || operation.includes("/admin")),
    ).toEqual([]);
    const patchMe = document.paths["/users/me"].patch;
    expect(patchMe.responses["422"].description).toContain("invalid_billing_address");
    expect(patchMe.responses["429"].description).toContain("rate_limited");
    expect(document.components.securitySchemes.ApiKey).toMatchObject({ type: "http", scheme: "bearer" });
    // API keys (or a member's session cookie) for operations, and the signed link of a report file's download.
    expect(Object.keys(document.components.securitySchemes)).toEqual(["ApiKey", "SessionCookie", "SignedLink"]);
    expect(document.paths["/reports/runs/{id}/download"].get.security).toEqual([{ SignedLink: [] }]);
    expect(document.paths["/subusers"].post.responses["409"].description).toContain("label_taken");
  });

  it("serves the internal document (admin and gateway contracts) only with the admin token", async () => {
    expect((await call("GET", "/internal/openapi.json")).status).toBe(401);
    expect((await call("GET", "/internal/openapi.json", { token: GATEWAY_TOKEN })).status).toBe(401);
    const response = await call("GET", "/internal/openapi.json", { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    const document = await json(response);
    expect(document.servers[0].url).toBe("https://api.test/internal");
    const documented = operationsOf(document);
    for (const expected of [
      "GET /admin/prices",
      "PUT /admin/prices/bandwidth/{product}",
      "PUT /admin/prices/isp/{country}/{asn}",
      "PUT /admin/prices/tiers/{product}/{plan}",
      "PUT /admin/accounts/{id}/custom-tiers/{product}",
      "POST /gateway/authorize",
      "POST /gateway/release",
      "POST /admin/accounts",
      "GET /admin/accounts",
      "GET /admin/accounts/{id}",
      "PATCH /admin/accounts/{id}",
      "POST /admin/accounts/{id}/credits",
      "POST /admin/accounts/{id}/api-keys",
      "GET /admin/accounts/{id}/api-keys",
      "DELETE /admin/api-keys/{id}",
    ]) {
      expect(documented, expected).toContain(expected);
    }
    expect(document.paths["/admin/accounts"].post.tags).toEqual(["Admin"]);
    expect(document.paths["/gateway/authorize"].post.tags).toEqual(["Gateway"]);
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual([
      "AdminToken",
      "GatewayNode",
      "GatewayToken",
    ]);
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

  it("serves the Postman collection without a token, derived from the OpenAPI document (public routes only)", async () => {
    const response = await call("GET", "/v1/postman/collection.json");
    expect(response.status).toBe(200);
    const collection = await json(response);
    expect(collection.info.schema).toContain("v2.1.0");
    const names = collection.item.flatMap((folder: { item: Array<{ name: string }> }) =>
      folder.item.map((i) => i.name),
    );
    expect(names).toContain("Get the account");
    expect(names.length).toBeGreaterThan(30);
    expect(JSON.stringify(collection)).not.toContain("/internal/");
  });
});

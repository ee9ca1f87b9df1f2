import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { ADMIN_TOKEN, call, json } from "../helpers/http";

type Json = Record<string, any>;
const METHODS = ["get", "post", "put", "patch", "delete"];

async function documents(): Promise<Record<"public" | "internal", Json>> {
  return {
    public: await json(await call("GET", "/v1/openapi.json")),
    internal: await json(await call("GET", "/internal/openapi.json", { token: ADMIN_TOKEN })),
  };
}

function operations(document: Json): Array<{ id: string; method: string; path: string; operation: Json }> {
  return Object.entries<Json>(document.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ id: `${method.toUpperCase()} ${path}`, method, path, operation })),
  );
}

/** Every schema object in a subtree, $refs to component schemas followed once. */
function* schemasIn(node: unknown, document: Json, seen = new Set<string>()): Generator<Json> {
  if (Array.isArray(node)) {
    for (const item of node) yield* schemasIn(item, document, seen);
    return;
  }
  if (!node || typeof node !== "object") return;
  const object = node as Json;
  if (typeof object.$ref === "string" && object.$ref.startsWith("#/components/schemas/")) {
    if (seen.has(object.$ref)) return;
    seen.add(object.$ref);
    yield* schemasIn(document.components.schemas[object.$ref.split("/").pop() as string], document, seen);
    return;
  }
  if (typeof object.type === "string") yield object;
  for (const [key, value] of Object.entries(object))
    if (key !== "example" && key !== "examples") yield* schemasIn(value, document, seen);
}

function parameter(operation: Json, name: string): Json | undefined {
  return (operation.parameters ?? []).find((p: Json) => p.in === "header" && p.name === name);
}

describe("the OpenAPI documents tell the whole truth", () => {
  it("every operation has a unique, camelCase verb+noun operationId", async () => {
    const { public: pub, internal } = await documents();
    const ids = [...operations(pub), ...operations(internal)].map((op) => op.operation.operationId);
    expect(ids.length).toBeGreaterThanOrEqual(53);
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Z][A-Za-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations(pub).find((op) => op.id === "POST /subusers")?.operation.operationId).toBe("createSubuser");
    expect(operations(pub).find((op) => op.id === "GET /isp/batches")?.operation.operationId).toBe("listIspBatches");
  });

  it("declares X-Request-Id on every response, X-RateLimit-* on every /v1 2xx and 4xx, Retry-After on every 429", async () => {
    const { public: pub, internal } = await documents();
    for (const { id, operation } of operations(pub)) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect(headers, `${id} ${status}`).toContain("X-Request-Id");
        if (!status.startsWith("5")) {
          expect(headers, `${id} ${status}`).toEqual(
            expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]),
          );
        }
        if (status === "429") expect(headers, id).toContain("Retry-After");
      }
      expect(Object.keys(operation.responses), id).toContain("429");
    }
    for (const { id, operation } of operations(internal)) {
      for (const [status, response] of Object.entries<Json>(operation.responses)) {
        expect(Object.keys(response.headers ?? {}), `${id} ${status}`).toContain("X-Request-Id");
      }
    }
  });

  it("declares Link on every paginated list and Idempotent-Replayed on every write a credential admits", async () => {
    const { public: pub } = await documents();
    let lists = 0;
    for (const { id, method, operation } of operations(pub)) {
      // Sign-in, invitations accepted and resets hold no credential yet: no guard keeps their answers to replay.
      if (operation.security?.length === 0) continue;
      const paginated = (operation.parameters ?? []).some((p: Json) => p.in === "query" && p.name === "cursor");
      if (paginated) {
        lists++;
        expect(Object.keys(operation.responses["200"].headers), id).toContain("Link");
      }
      if (method !== "get") {
        const success = operation.responses["200"] ?? operation.responses["201"] ?? operation.responses["202"];
        expect(Object.keys(success ?? {}).length, id).toBeGreaterThan(0);
        expect(Object.keys(success.headers), id).toContain("Idempotent-Replayed");
      }
    }
    expect(lists).toBeGreaterThanOrEqual(6);
  });

  it("declares Idempotency-Key (≤ 64, no fixed example) on every write a credential admits and X-MFA-Code on every gated action", async () => {
    const { public: pub } = await documents();
    for (const { id, method, operation } of operations(pub)) {
      if (method === "get" || operation.security?.length === 0) continue;
      const key = parameter(operation, "Idempotency-Key");
      expect(key, id).toBeDefined();
      expect(key?.schema.maxLength, id).toBe(64);
      expect(key?.schema.example ?? key?.example, id).toBeUndefined();
    }
    const gated = operations(pub)
      .filter(({ operation }) => parameter(operation, "X-MFA-Code"))
      .map(({ id }) => id)
      .sort();
    expect(gated).toEqual([
      "DELETE /api-keys/{id}",
      "DELETE /auth/mfa",
      "DELETE /budget",
      "DELETE /isp/batches/{id}",
      "DELETE /users/me/security/mfa",
      "PATCH /api-keys/{id}",
      "PATCH /users/me",
      "POST /api-keys",
      "POST /api-keys/{id}/rotate",
      "POST /auth/mfa",
      "POST /users/me/security/mfa",
      "PUT /budget",
    ]);
    for (const id of gated) {
      const operation = operations(pub).find((op) => op.id === id)?.operation as Json;
      expect(operation.responses["403"].description, id).toContain("mfa_required");
    }
  });

  it("states each key operation's scope machine-readably (x-key-scope, as its description says) and marks the test helpers sandbox-only", async () => {
    const { public: pub } = await documents();
    for (const { id, path, operation } of operations(pub)) {
      if (!operation.security.some((scheme: Json) => "ApiKey" in scheme)) {
        expect(operation, id).not.toHaveProperty("x-key-scope");
        continue;
      }
      if (operation["x-key-scope"] === "any") expect(operation.description, id).toContain("Key scope: any key.");
      else {
        expect(operation["x-key-scope"], id).toMatch(/^[a-z_]+:(read|write)$/);
        expect(operation.description, id).toContain(`Key scope: \`${operation["x-key-scope"]}\`.`);
      }
      expect(operation["x-sandbox-only"] === true, id).toBe(path.startsWith("/test-helpers/"));
      if (operation["x-sandbox-only"])
        expect(operation.responses["403"].description, id).toContain("sandbox_key_required");
    }
  });

  it("bounds every string, array and integer (OWASP API4): maxLength, maxItems, minimum/maximum and format", async () => {
    const problems: string[] = [];
    for (const document of Object.values(await documents())) {
      for (const schema of schemasIn({ paths: document.paths, components: document.components }, document)) {
        const types = [schema.type].flat();
        if (types.includes("string") && schema.maxLength === undefined && !schema.enum && schema.const === undefined) {
          problems.push(`string without maxLength: ${JSON.stringify(schema).slice(0, 80)}`);
        }
        if (types.includes("array") && schema.maxItems === undefined) problems.push("array without maxItems");
        if (types.includes("integer")) {
          if (schema.minimum === undefined || schema.maximum === undefined) problems.push("integer without range");
          if (!["int32", "int64"].includes(schema.format)) problems.push("integer without format");
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it("describes what exists: no internal route in the public document, and its description names every area it serves", async () => {
    const { public: pub } = await documents();
    expect(JSON.stringify(pub.paths)).not.toMatch(/\/(internal|admin|gateway)\//);
    const description = pub.info.description.toLowerCase();
    for (const area of [
      "sub-users",
      "whitelists",
      "orders",
      "isp",
      "subscriptions",
      "sessions",
      "traffic",
      "reports",
      "webhook",
      "events",
      "proxy test",
    ]) {
      expect(description, area).toContain(area);
    }
  });

  it("sends what it declares: rate-limit headers, Link on a page with a next one, no-store on a secret", async () => {
    const account = await createAccount();
    for (let i = 0; i < 3; i++) {
      await call("POST", "/v1/subusers", {
        token: account.token,
        body: { label: `doc-${i}`, products: ["residential"] },
      });
    }
    const page = await call("GET", "/v1/subusers?limit=2", { token: account.token });
    expect(page.headers.get("Link")).toMatch(/^<[^>]+>; rel="next"$/);
    expect(page.headers.get("X-RateLimit-Limit")).toBe("600");
    const created = await call("POST", "/v1/subusers", {
      token: account.token,
      body: { label: "doc-secret", products: ["residential"] },
    });
    expect(created.headers.get("Cache-Control")).toBe("no-store");
    const unauthenticated = await call("GET", "/v1/users/me");
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("X-RateLimit-Limit")).toBe("60");
    expect(unauthenticated.headers.get("X-RateLimit-Reset")).toMatch(/^\d+$/);
  });
});

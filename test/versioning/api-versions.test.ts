import { createExecutionContext } from "cloudflare:test";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import { documentOf, publicApi } from "../../src/api-docs/document";
import { type ApiVersion, deprecationHeaders } from "../../src/api-versions";
import { createApp } from "../../src/app";
import type { AppEnv } from "../../src/env";
import { publicRouter } from "../../src/routes";
import { createAccount } from "../helpers/accounts";
import { BASE, call, env, json } from "../helpers/http";

const SINCE = new Date("2026-06-01T00:00:00Z");
const SUNSET = new Date("2026-12-01T00:00:00Z");
const deprecation = { since: SINCE, sunset: SUNSET, guide: "/v2/docs", policy: "https://example.com/versioning" };

/** A stand-in for a later major version: one operation and its own document, served at /v2. */
function v2Fixture() {
  const router = new OpenAPIHono<AppEnv>();
  const ping = createRoute({
    method: "get",
    path: "/ping",
    operationId: "ping",
    responses: {
      200: { description: "Pong.", content: { "application/json": { schema: z.object({ version: z.string() }) } } },
    },
  });
  router.openapi(ping, (c) => c.json({ version: "v2" }, 200));
  return { router, document: documentOf(router, { ...publicApi, basePath: "/v2" }) };
}

/** The app with v1 deprecated in favour of v2 (today's table has only a live v1). */
const versions: ApiVersion[] = [
  { name: "v1", build: publicRouter, deprecation },
  { name: "v2", build: v2Fixture },
];
const app = createApp(versions);

async function fetchApp(path: string, token?: string): Promise<Response> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  return app.fetch(new Request(`${BASE}${path}`, { headers }), env, createExecutionContext());
}

function expectDeprecated(response: Response) {
  expect(response.headers.get("Deprecation")).toBe(`@${SINCE.getTime() / 1000}`);
  expect(response.headers.get("Sunset")).toBe("Tue, 01 Dec 2026 00:00:00 GMT");
  const link = response.headers.get("Link") ?? "";
  expect(link).toContain(`<${BASE}/v2/docs>; rel="deprecation"`);
  expect(link).toContain('<https://example.com/versioning>; rel="sunset"');
}

function expectNotDeprecated(response: Response) {
  expect(response.headers.get("Deprecation")).toBeNull();
  expect(response.headers.get("Sunset")).toBeNull();
  expect(response.headers.get("Link") ?? "").not.toMatch(/rel="(deprecation|sunset)"/);
}

describe("API versions (spec §9)", () => {
  it("today's /v1 is live: no Deprecation, Sunset or deprecation Link", async () => {
    const account = await createAccount();
    expectNotDeprecated(await call("GET", "/v1/users/me", { token: account.token }));
    expectNotDeprecated(await call("GET", "/v1/openapi.json"));
  });

  it("Deprecation is an RFC 9745 structured date (@unix seconds), Sunset an RFC 8594 HTTP date", () => {
    expect(deprecationHeaders(deprecation, "https://api.example.com")).toEqual([
      ["Deprecation", "@1780272000"],
      ["Sunset", "Tue, 01 Dec 2026 00:00:00 GMT"],
      ["Link", '<https://api.example.com/v2/docs>; rel="deprecation"'],
      ["Link", '<https://example.com/versioning>; rel="sunset"'],
    ]);
  });

  it("a deprecated version still answers, and marks every response: success, error, not found, descriptions", async () => {
    const account = await createAccount();
    const me = await fetchApp("/v1/users/me", account.token);
    expect(me.status).toBe(200);
    expect((await json(me)).id).toBe(account.id);
    expectDeprecated(me);

    const unauthorized = await fetchApp("/v1/users/me");
    expect(unauthorized.status).toBe(401);
    expectDeprecated(unauthorized);

    const missing = await fetchApp("/v1/no-such-thing", account.token);
    expect(missing.status).toBe(404);
    expectDeprecated(missing);

    for (const path of ["/v1/openapi.json", "/v1/docs", "/v1/postman/collection.json"]) {
      const description = await fetchApp(path);
      expect(description.status).toBe(200);
      expectDeprecated(description);
    }
  });

  it("a deprecated version's own Link (the next page) stays beside the deprecation links", async () => {
    const account = await createAccount();
    for (const label of ["page-a", "page-b"]) {
      const created = await call("POST", "/v1/subusers", { token: account.token, body: { label, products: ["isp"] } });
      expect(created.status).toBe(201);
    }
    const page = await fetchApp("/v1/subusers?limit=1", account.token);
    expect(page.status).toBe(200);
    expect(page.headers.get("Link")).toMatch(/rel="next"/);
    expectDeprecated(page);
  });

  it("the next major version is served beside it, with its own document, unmarked", async () => {
    const pong = await fetchApp("/v2/ping");
    expect(pong.status).toBe(200);
    expect(await json(pong)).toEqual({ version: "v2" });
    expectNotDeprecated(pong);

    const described = await fetchApp("/v2/openapi.json");
    expectNotDeprecated(described);
    const document = await json(described);
    expect(document.servers[0].url).toBe(`${BASE}/v2`);
    expect(Object.keys(document.paths)).toEqual(["/ping"]);
    expect(document.paths["/ping"].get.operationId).toBe("ping");

    const v1Document = await json(await fetchApp("/v1/openapi.json"));
    expect(v1Document.servers[0].url).toBe(`${BASE}/v1`);
    expect(v1Document.paths["/subusers"]).toBeDefined();
  });

  it("a deprecated version's document says so: every operation deprecated, every response declaring the headers", async () => {
    const document = await json(await fetchApp("/v1/openapi.json"));
    const operations = Object.values(document.paths).flatMap((item) => Object.values(item as object));
    expect(operations.length).toBeGreaterThan(40);
    for (const operation of operations) {
      expect(operation.deprecated, operation.operationId).toBe(true);
      for (const response of Object.values(operation.responses) as Array<{ headers: object }>) {
        expect(response.headers).toMatchObject({
          Deprecation: { $ref: "#/components/headers/Deprecation" },
          Sunset: { $ref: "#/components/headers/Sunset" },
          Link: { $ref: "#/components/headers/Link" },
        });
      }
    }
    expect(document.components.headers.Deprecation.schema.pattern).toBe("^@\\d+$");
    // A list's Link carries its next page and the deprecation links: the header no longer promises rel="next" alone.
    expect(document.components.headers.Link.schema.pattern).toBeUndefined();
    expect(document.info.description).toContain(
      "**Deprecated** since 2026-06-01: this version stops answering on 2026-12-01",
    );

    const next = await json(await fetchApp("/v2/openapi.json"));
    expect(next.paths["/ping"].get.deprecated).toBeUndefined();
    const live = await json(await call("GET", "/v1/openapi.json"));
    const liveOperations = Object.values(live.paths).flatMap((item) => Object.values(item as object));
    expect(liveOperations.filter((operation) => operation.deprecated)).toEqual([]);
    expect(live.components.headers.Deprecation).toBeUndefined();
  });

  it("paths outside the versions are not marked", async () => {
    expectNotDeprecated(await fetchApp("/healthz"));
  });
});

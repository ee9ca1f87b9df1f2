import { createExecutionContext } from "cloudflare:test";
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { documentOf, publicApi } from "../../src/api-docs/document";
import { type ApiVersion, deprecationHeaders, HTTP_DATE_PATTERN, LINK_HEADER_PATTERN } from "../../src/api-versions";
import { createApp } from "../../src/app";
import type { AppEnv } from "../../src/env";
import { publicRouter } from "../../src/routes";
import { createAccount } from "../helpers/accounts";
import { BASE, call, env, json } from "../helpers/http";

const SINCE = new Date("2026-06-01T00:00:00Z");
const SUNSET = new Date("2026-12-01T00:00:00Z");
const deprecation = { since: SINCE, sunset: SUNSET, guide: "/v2/docs", policy: "https://example.com/versioning" };
/** Where the clock stands unless a test moves it: v1 deprecated, its sunset ahead (whatever the real date). */
const BEFORE_SUNSET = Date.parse("2026-09-01T00:00:00Z");

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

async function fetchApp(path: string, token?: string, method = "GET", body?: unknown): Promise<Response> {
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`${BASE}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return app.fetch(request, env, createExecutionContext());
}

function setClock(ms: number) {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(ms);
}

beforeEach(() => setClock(BEFORE_SUNSET));
afterEach(() => {
  vi.useRealTimers();
});

function expectDeprecated(response: Response) {
  expect(response.headers.get("Deprecation")).toBe(`@${SINCE.getTime() / 1000}`);
  expect(response.headers.get("Sunset")).toBe("Tue, 01 Dec 2026 00:00:00 GMT");
  const link = response.headers.get("Link") ?? "";
  expect(link).toContain(`<${BASE}/v2/docs>; rel="deprecation"`);
  expect(link).toContain('<https://example.com/versioning>; rel="sunset"');
  // As the deprecated version's document declares them.
  expect(response.headers.get("Sunset")).toMatch(new RegExp(HTTP_DATE_PATTERN));
  expect(link).toMatch(new RegExp(LINK_HEADER_PATTERN));
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
    // Every operation but the signed download link, which answers until the link expires (below).
    const operations = Object.values(document.paths)
      .flatMap((item) => Object.values(item as object))
      .filter((operation) => !operation.security?.some((scheme: object) => "SignedLink" in scheme));
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
    expect(document.components.headers.Link.schema.pattern).toBe(LINK_HEADER_PATTERN);
    expect(new RegExp(LINK_HEADER_PATTERN).test('<https://api.test/v1/subusers?cursor=x>; rel="next"')).toBe(true);
    expect(document.components.headers.Sunset.schema.pattern).toBe(HTTP_DATE_PATTERN);
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

async function expectSunset(response: Response) {
  expect(response.status).toBe(410);
  const body = await json(response);
  expect(Object.keys(body).sort()).toEqual(["code", "doc_url", "message", "request_id"]);
  expect(body.code).toBe("version_sunset");
  expect(body.message).toBe(
    `API version v1 reached its sunset on 2026-12-01 and no longer answers: migrate with the guide at ${BASE}/v2/docs.`,
  );
  expect(body.request_id).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(response.headers.get("X-Request-Id")).toBe(body.request_id);
  expectDeprecated(response);
  // Answered ahead of the version's router: its key guard never counted the call.
  expect(response.headers.get("X-RateLimit-Limit")).toBeNull();
}

describe("a version after its sunset", () => {
  it("answers as before until the Sunset instant, and 410 version_sunset from that instant on", async () => {
    const account = await createAccount();
    setClock(SUNSET.getTime() - 1);
    const before = await fetchApp("/v1/users/me", account.token);
    expect(before.status).toBe(200);
    expect((await json(before)).id).toBe(account.id);
    expectDeprecated(before);

    setClock(SUNSET.getTime());
    await expectSunset(await fetchApp("/v1/users/me", account.token));
  });

  it("runs no handler and charges no rate limit: a write after the sunset is not made", async () => {
    const account = await createAccount();
    setClock(SUNSET.getTime() + 60_000);
    // Today's live /v1 (the real worker) shares the database and the key's guard with the fixture app.
    const first = await call("GET", "/v1/users/me", { token: account.token });
    const remaining = Number(first.headers.get("X-RateLimit-Remaining"));
    expect(remaining).toBeGreaterThan(0);

    const write = await fetchApp("/v1/subusers", account.token, "POST", { label: "after-sunset", products: ["isp"] });
    await expectSunset(write);
    await expectSunset(await fetchApp("/v1/subusers", account.token));

    const listed = await call("GET", "/v1/subusers", { token: account.token });
    expect(listed.status).toBe(200);
    expect((await json(listed)).data.map((subuser: { label: string }) => subuser.label)).not.toContain("after-sunset");
    // Since `first`, only this live call was counted, not the two sunset answers.
    expect(Number(listed.headers.get("X-RateLimit-Remaining"))).toBe(remaining - 1);
  });

  it("answers 410 to every other path under it, ahead of authentication: no key, an unknown path, HEAD, a trailing slash", async () => {
    setClock(SUNSET.getTime() + 1000);
    await expectSunset(await fetchApp("/v1/users/me"));
    await expectSunset(await fetchApp("/v1/users/me", "live_not-a-key"));
    await expectSunset(await fetchApp("/v1/no-such-thing"));
    await expectSunset(await fetchApp("/v1"));
    await expectSunset(await fetchApp("/v1/"));
    const head = await fetchApp("/v1/users/me", undefined, "HEAD");
    expect(head.status).toBe(410);
    expect(head.headers.get("Sunset")).toBe("Tue, 01 Dec 2026 00:00:00 GMT");
  });

  it("still serves report files by their signed links: links already emailed stay good until they expire", async () => {
    setClock(SUNSET.getTime() + 1000);
    const download = await fetchApp("/v1/reports/runs/run_x/download?exp=1&sig=x");
    expect(download.status).not.toBe(410);
    expect((await json(download)).code).toMatch(/^download_link_/);
  });

  it("keeps serving its descriptions, the reference for migrating; its document lists the 410", async () => {
    setClock(SUNSET.getTime() + 1000);
    for (const path of ["/v1/openapi.json", "/v1/docs", "/v1/postman/collection.json"]) {
      const description = await fetchApp(path);
      expect(description.status, path).toBe(200);
      expectDeprecated(description);
    }
    const document = await json(await fetchApp("/v1/openapi.json"));
    expect(document.paths["/users/me"].get.responses["410"].description).toContain("`version_sunset`");
  });

  it("leaves the next version and today's live /v1 alone", async () => {
    const account = await createAccount();
    setClock(SUNSET.getTime() + 1000);
    const pong = await fetchApp("/v2/ping");
    expect(pong.status).toBe(200);
    expect(await json(pong)).toEqual({ version: "v2" });
    expectNotDeprecated(pong);

    const live = await call("GET", "/v1/users/me", { token: account.token });
    expect(live.status).toBe(200);
    expectNotDeprecated(live);
    expect((await fetchApp("/healthz")).status).toBe(200);
  });

  it("is declared in a deprecated version's document: 410 version_sunset on every operation, after the sunset date", async () => {
    const document = await json(await fetchApp("/v1/openapi.json"));
    // Every operation but the signed download link, which answers until the link expires.
    const operations = Object.values(document.paths)
      .flatMap((item) => Object.values(item as object))
      .filter((operation) => !operation.security?.some((scheme: object) => "SignedLink" in scheme));
    expect(operations.length).toBeGreaterThan(40);
    for (const operation of operations) {
      const gone = operation.responses["410"];
      expect(gone, operation.operationId).toBeDefined();
      expect(gone.description).toContain(
        "`version_sunset`: after the sunset date (2026-12-01), every operation of this version answers 410",
      );
      expect(gone.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
      expect(gone.headers).toEqual({
        "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
        "X-RateLimit-Limit": { $ref: "#/components/headers/X-RateLimit-Limit" },
        "X-RateLimit-Remaining": { $ref: "#/components/headers/X-RateLimit-Remaining" },
        "X-RateLimit-Reset": { $ref: "#/components/headers/X-RateLimit-Reset" },
        Deprecation: { $ref: "#/components/headers/Deprecation" },
        Sunset: { $ref: "#/components/headers/Sunset" },
        Link: { $ref: "#/components/headers/Link" },
      });
    }
    expect(document.components.schemas.Error.properties.code.enum).toContain("version_sunset");
    expect(document.info.description).toContain("after which every operation answers 410 `version_sunset`");

    const next = await json(await fetchApp("/v2/openapi.json"));
    expect(next.paths["/ping"].get.responses["410"]).toBeUndefined();
    const live = await json(await call("GET", "/v1/openapi.json"));
    expect(JSON.stringify(live)).not.toContain("after the sunset date");
  });
});

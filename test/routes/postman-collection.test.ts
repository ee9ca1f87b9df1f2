import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
// The file the assets' build wrote (scripts/docs-assets.mjs), as it is on disk.
import built from "../../public/v1/postman/collection.json?raw";
import { assertScenarioCovers, postmanCollection } from "../../src/api-docs/postman";
import { BUILT_ORIGIN } from "../../src/api-docs/postman-asset";
import { BASE, call, json } from "../helpers/http";

interface Script {
  listen: "prerequest" | "test";
  script: { exec: string[] };
}

interface Item {
  id: string;
  name: string;
  event: Script[];
  request: {
    method: string;
    header: Array<{ key: string; value: string }>;
    url: { raw: string; host: string[]; path: string[]; query?: Array<{ key: string; value: string }> };
    body?: { mode: string; raw: string };
  };
}

interface Collection {
  info: { schema: string };
  auth: { type: string; bearer: Array<{ key: string; value: string }> };
  variable: Array<{ key: string; value: string }>;
  item: Array<{ name: string; item: Item[] }>;
}

interface DocumentedOperation {
  method: string;
  path: string;
  statuses: string[];
  /** A path parameter's allowed values, when it is an enum (`{product}`). */
  pathEnums: Record<string, string[]>;
  /** Its success is a file (no JSON body): its media types. */
  fileTypes: string[];
  /** The live account's alone (`x-live-only`): a sandbox key is refused. */
  liveOnly: boolean;
}

const DYNAMIC_VARIABLES = new Set(["$guid", "$timestamp"]);
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

let document: Record<string, any>;
let served: Response;
let collection: Collection;
let items: Item[];
let operations: Map<string, DocumentedOperation>;

beforeAll(async () => {
  document = await json(await call("GET", "/v1/openapi.json"));
  served = await call("GET", "/v1/postman/collection.json");
  expect(served.status, "the collection is built by `node scripts/docs-assets.mjs`").toBe(200);
  collection = await json<Collection>(served.clone());
  items = collection.item.flatMap((folder) => folder.item);
  operations = new Map();
  for (const [path, methods] of Object.entries<Record<string, any>>(document.paths)) {
    for (const [method, operation] of Object.entries<Record<string, any>>(methods)) {
      operations.set(operation.operationId, {
        method: method.toUpperCase(),
        path,
        statuses: Object.keys(operation.responses),
        pathEnums: Object.fromEntries(
          (operation.parameters ?? [])
            .filter((parameter: any) => parameter.in === "path" && parameter.schema?.enum)
            .map((parameter: any) => [parameter.name, parameter.schema.enum]),
        ),
        fileTypes: Object.entries<Record<string, any>>(operation.responses)
          .filter(([status, response]) => status.startsWith("2") && !response.content?.["application/json"])
          .flatMap(([, response]) => Object.keys(response.content ?? {})),
        liveOnly: operation["x-live-only"] === true,
      });
    }
  }
});

function script(item: Item, listen: Script["listen"]): string {
  return item.event.find((event) => event.listen === listen)?.script.exec.join("\n") ?? "";
}

function matches(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((match) => match[1]!);
}

/** The `{{variables}}` a request sends: URL, headers and body. */
function variablesSent(item: Item): string[] {
  return matches(JSON.stringify(item.request), /\{\{([^{}]+)\}\}/g);
}

/** Variables a script sets (`pm.variables.set("x", …)`, `pm.collectionVariables.set("x", …)`). */
function variablesSet(source: string): string[] {
  return matches(source, /pm\.(?:variables|collectionVariables)\.set\("([^"]+)"/g);
}

/** Variables a script reads: `pm.collectionVariables.get("x")` and `{{x}}` in `pm.variables.replaceIn("…")`. */
function variablesRead(source: string): string[] {
  const replaced = matches(source, /pm\.variables\.replaceIn\(("(?:[^"\\]|\\.)*")\)/g).flatMap((literal) =>
    matches(JSON.parse(literal), /\{\{([^{}]+)\}\}/g),
  );
  return [...matches(source, /pm\.(?:variables|collectionVariables)\.get\("([^"]+)"\)/g), ...replaced];
}

describe("the Postman collection", () => {
  it("places every public operation of the OpenAPI document exactly once, in folders", () => {
    const placed = items.map((item) => item.id);
    expect(placed.length).toBe(new Set(placed).size);
    expect([...placed].sort()).toEqual([...operations.keys()].sort());
    expect(items.map((item) => item.name).length).toBe(new Set(items.map((item) => item.name)).size);
  });

  it("sends each request with its operation's method to its operation's path under {{baseUrl}}", () => {
    for (const item of items) {
      const operation = operations.get(item.id)!;
      const { url } = item.request;
      expect(item.request.method, item.id).toBe(operation.method);
      expect(url.host, item.id).toEqual(["{{baseUrl}}"]);
      expect(url.raw.startsWith(`{{baseUrl}}/${url.path.join("/")}`), item.id).toBe(true);
      const template = operation.path.split("/").filter(Boolean);
      expect(url.path.length, item.id).toBe(template.length);
      template.forEach((segment, index) => {
        const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
        const sent = url.path[index]!;
        if (!parameter) expect(sent, item.id).toBe(segment);
        else if (operation.pathEnums[parameter]) expect(operation.pathEnums[parameter], item.id).toContain(sent);
        else expect(sent, `${item.id} ${segment}`).toMatch(/^\{\{\w+\}\}$/);
      });
    }
  });

  it("authenticates with a bearer {{api_key}} and points {{baseUrl}} at the server URL", () => {
    expect(collection.info.schema).toBe("https://schema.getpostman.com/json/collection/v2.1.0/collection.json");
    expect(collection.auth.type).toBe("bearer");
    expect(collection.auth.bearer).toContainEqual(expect.objectContaining({ key: "token", value: "{{api_key}}" }));
    const variables = Object.fromEntries(collection.variable.map(({ key, value }) => [key, value]));
    expect(variables.baseUrl).toBe(`${BASE}/v1`);
    expect(variables).toHaveProperty("api_key");
    expect(document.servers[0].url).toBe(variables.baseUrl);
  });

  it("uses only variables that are defined, dynamic, or set by an earlier request", () => {
    const defined = new Set(collection.variable.map(({ key }) => key));
    for (const item of items) {
      const prerequest = script(item, "prerequest");
      const tests = script(item, "test");
      const local = new Set([...defined, ...variablesSet(prerequest)]);
      for (const name of [...variablesSent(item), ...variablesRead(prerequest)]) {
        if (name.startsWith("$")) expect(DYNAMIC_VARIABLES, `${item.id}: {{${name}}}`).toContain(name);
        else expect(local, `${item.id} uses {{${name}}} before it is set`).toContain(name);
      }
      const ownSets = new Set(variablesSet(tests));
      for (const name of variablesRead(tests).filter((read) => !ownSets.has(read))) {
        expect(local, `${item.id}'s test reads ${name} before it is set`).toContain(name);
      }
      for (const name of ownSets) defined.add(name);
    }
  });

  it("sends bodies from the examples, with the examples' ids replaced by captured variables", () => {
    const exampleIds = /"[a-z]+_01JD2W6Q6J5E4V3N0Z9Y8X7W6V"/;
    for (const item of items) {
      expect(JSON.stringify(item.request), item.id).not.toMatch(exampleIds);
      if (!item.request.body) continue;
      expect(() => JSON.parse(item.request.body!.raw), item.id).not.toThrow();
      expect(item.request.header, item.id).toContainEqual({ key: "Content-Type", value: "application/json" });
    }
    const createSubuser = items.find((item) => item.id === "createSubuser")!;
    expect(JSON.parse(createSubuser.request.body!.raw).label, "a label unique per run").toMatch(/\{\{\$timestamp\}\}/);
  });

  it("sends a fresh Idempotency-Key with every write", () => {
    const writes = items.filter((item) => WRITES.has(item.request.method));
    expect(writes.length).toBeGreaterThan(20);
    for (const item of writes) {
      expect(item.request.header, item.id).toContainEqual({ key: "Idempotency-Key", value: "{{$guid}}" });
    }
  });

  it("asserts a documented status, the request id and the body's documented shape (or, for a file, its type) after every request", () => {
    for (const item of items) {
      const tests = script(item, "test");
      const statuses = matches(tests, /pm\.response\.to\.have\.status\((\d+)\)/g);
      // A test helper has two: 403 for a live key, its success for a sandbox key; the account's people the reverse.
      const twoModes = item.request.url.path.includes("test-helpers") || operations.get(item.id)!.liveOnly;
      expect(statuses, item.id).toHaveLength(twoModes ? 2 : 1);
      for (const status of statuses) expect(operations.get(item.id)!.statuses, item.id).toContain(status);
      expect(tests, item.id).toContain('pm.response.to.have.header("X-Request-Id")');
      const { fileTypes } = operations.get(item.id)!;
      if (fileTypes.length > 0) {
        for (const type of fileTypes) expect(tests, item.id).toContain(JSON.stringify(type.split(";")[0]));
        expect(tests, item.id).toContain("attachment; filename=");
      } else {
        expect(tests, item.id).toMatch(/pm\.expect\(conform\(body, \{.*\}, "body", \[\]\)\)\.to\.eql\(\[\]\)/);
      }
    }
  });

  it("the account's people expect 403 live_key_required on a sandbox key and act on a live key", () => {
    const people = items.filter((item) => operations.get(item.id)!.liveOnly);
    expect(people.length).toBeGreaterThan(0);
    for (const item of people) {
      const [sandbox, live] = script(item, "test").split("} else {");
      expect(sandbox, item.id).toContain('pm.collectionVariables.get("livemode") === "false"');
      const refusal = 'pm.expect(body && body.code).to.eql("live_key_required")';
      expect(sandbox, item.id).toContain(refusal);
      expect(live, item.id).not.toContain(refusal);
    }
  });

  it("runs on a live or a sandbox key: test helpers expect 403 on a live key and act on a sandbox key", () => {
    const account = script(items.find((item) => item.id === "getAccount")!, "test");
    expect(account).toContain('pm.collectionVariables.set("livemode", JSON.stringify(pick(body, "livemode")));');
    const helpers = collection.item.find((folder) => folder.name.startsWith("Test helpers"))!.item;
    expect(helpers.map((item) => item.id).sort()).toEqual(
      items
        .filter((item) => item.request.url.path.includes("test-helpers"))
        .map((item) => item.id)
        .sort(),
    );
    for (const item of helpers) {
      const tests = script(item, "test");
      const [live, sandbox] = tests.split("} else {");
      expect(live, item.id).toContain('if (pm.collectionVariables.get("livemode") !== "false")');
      expect(live, item.id).toContain("pm.response.to.have.status(403)");
      expect(live, item.id).toContain('.to.eql("sandbox_key_required")');
      expect(sandbox, item.id).toMatch(/pm\.response\.to\.have\.status\(20\d\)/);
      expect(sandbox, item.id).toContain("conform(body");
    }
  });

  it("skips the proxy test's checks, saying so, where no gateway is reachable; the answer is still checked", () => {
    for (const id of ["runProxyTest", "getProxyTest"]) {
      const tests = script(items.find((item) => item.id === id)!, "test");
      const [always, guarded] = tests.split('if (pm.collectionVariables.get("no_gateway") === "true") {');
      expect(always, id).toContain('body.error_code === "gateway-unreachable"');
      expect(always, id).toContain("pm.response.to.have.status(");
      expect(guarded, id).toContain(`pm.test.skip("no gateway reachable`);
      expect(guarded, id).toContain('pm.test("auth_ok is true"');
    }
  });

  it("captures the ids the scenario needs, and polls the ISP batch until it is active", () => {
    const captured = items.flatMap((item) => variablesSet(script(item, "test")));
    for (const name of ["subuser_id", "order_id", "batch_id", "ip_id", "subscription_id", "whitelist_entry_id"]) {
      expect(captured, name).toContain(name);
    }
    expect(captured).toContain("batch_whitelist_entry_id");
    const poll = script(items.find((item) => item.id === "getIspBatch")!, "test");
    expect(poll).toContain("pm.execution.setNextRequest(pm.info.requestId)");
  });

  it("polls an ISP batch as long as provisioning may take (5 minutes), and past that fails once, saying why", () => {
    const poll = script(items.find((item) => item.id === "getIspBatch")!, "test");
    expect(poll).toContain("attempt < 100"); // 300 s at one try every 3 s
    expect(poll).toContain(
      "status 'active' not reached within 300 s (the API reference: provisioning takes 1–5 minutes",
    );
    const timedOutBranch = poll.slice(poll.indexOf("} else if ("), poll.lastIndexOf("} else {"));
    expect(timedOutBranch).toContain("pm.expect.fail(");
    expect(timedOutBranch).not.toContain("conform(body");
  });

  it("orders the scenario: create before use, MFA off again before the gated release, deletions last", () => {
    const position = (id: string) => items.findIndex((item) => item.id === id);
    expect(position("createSubuser")).toBeLessThan(position("getSubuser"));
    expect(position("getSubuser")).toBeLessThan(position("updateSubuser"));
    expect(position("createOrder")).toBeLessThan(position("getIspBatch"));
    expect(position("enrollMfa")).toBeLessThan(position("verifyMfa"));
    expect(position("verifyMfa")).toBeLessThan(position("disableMfa"));
    expect(position("disableMfa")).toBeLessThan(position("releaseIspBatch"));
    expect(position("cancelSubscription")).toBeLessThan(position("releaseIspBatch"));
    expect(items.at(-1)!.id).toBe("deleteSubuser");
  });
});

describe("the collection as built and served", () => {
  it("is the built file byte for byte, with the request's origin in baseUrl, as JSON", async () => {
    expect(served.headers.get("Content-Type")).toBe("application/json");
    expect(built.split(BUILT_ORIGIN)).toHaveLength(2);
    expect(await served.text()).toBe(built.replace(BUILT_ORIGIN, BASE));
  });

  it("names the origin it is fetched from in baseUrl, whichever it is", async () => {
    const origin = "http://localhost:8811";
    const response = await exports.default.fetch(new Request(`${origin}/v1/postman/collection.json`));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(built.replace(BUILT_ORIGIN, origin));
  });
});

describe("the collection generator (run by the build, never by the Worker)", () => {
  it("finds every operation of the served document placed in the scenario", () => {
    expect(() => assertScenarioCovers(document)).not.toThrow();
  });

  it("throws when the document has an operation the scenario does not place", () => {
    const extended = structuredClone(document);
    extended.paths["/widgets"] = { get: { operationId: "listWidgets", tags: ["Widgets"], responses: {} } };
    expect(() => assertScenarioCovers(extended)).toThrow(/listWidgets is not placed in the scenario/);
    expect(() => postmanCollection(extended, `${BASE}/v1`, "")).toThrow(/listWidgets is not placed/);
  });

  it("throws when the scenario places an operation the document lacks", () => {
    const reduced = structuredClone(document);
    delete reduced.paths["/users/me/security"];
    expect(() => assertScenarioCovers(reduced)).toThrow(/getSecurityInfo is not an operation/);
  });

  it("takes the script functions only as exported function declarations", () => {
    const compiled = 'export function pick(value, path) {\n  return value;\n}\nconst shadow = "not a declaration";\n';
    expect(() => postmanCollection(document, `${BASE}/v1`, compiled)).toThrow(/only exported function declarations/);
  });
});

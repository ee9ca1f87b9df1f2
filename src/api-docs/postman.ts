/**
 * The Postman v2.1 collection of the public API, a runnable end-to-end scenario derived from the OpenAPI document
 * (`npx newman run <origin>/v1/postman/collection.json --env-var api_key=<key>`), generated when the static assets
 * are built (`scripts/docs-assets.mjs`), never in the Worker: it serves the built file (`postman-asset.ts`).
 *
 * The document gives each request its method, URL, example body and expected response shape; the scenario
 * (`postman-scenario/scenario.ts`, the only hand-written part) gives the order, the values the examples cannot know
 * (ids captured from earlier responses) and the extra checks. Every public operation must be placed exactly once: a
 * route that the scenario does not place fails the build (`assertScenarioCovers`), so it cannot silently be left
 * out. The scripts' checks are generated here from the scenario; the functions they call are code, in
 * `postman-scenario/script-functions.ts`, compiled by the build.
 */
import { CONSTANTS, ID_VARIABLES, SCENARIO, type Step } from "./postman-scenario/scenario";
import type { Shape } from "./postman-scenario/script-functions";

// ---------------------------------------------------------------------------------------------------------------
// The OpenAPI document, as far as it is read here
// ---------------------------------------------------------------------------------------------------------------

interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  pattern?: string;
  format?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  allOf?: Schema[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  example?: unknown;
}

interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: Schema;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>;
}

interface Document {
  info: { title: string; version: string; description?: string };
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

interface Located {
  method: string;
  path: string;
  operation: Operation;
}

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "patch", "head", "options", "trace"]);
const POSTMAN_SCHEMA = "https://schema.getpostman.com/json/collection/v2.1.0/collection.json";
const POLL_INTERVAL_MS = 3000;

// ---------------------------------------------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------------------------------------------

/**
 * The collection: `{{baseUrl}}` (this `baseUrl`, the document's server URL) and `{{api_key}}` (bearer auth of
 * every request) as collection variables, one folder per scenario stage. `scriptFunctions` is
 * `postman-scenario/script-functions.ts` compiled to JavaScript (types stripped).
 */
export function postmanCollection(source: unknown, baseUrl: string, scriptFunctions: string) {
  const document = source as Document;
  assertScenarioCovers(document);
  const operations = publicOperations(document);
  const functions = declarations(scriptFunctions);
  return {
    info: {
      name: `${document.info.title} ${document.info.version}`,
      description: document.info.description,
      schema: POSTMAN_SCHEMA,
    },
    auth: { type: "bearer", bearer: [{ key: "token", value: "{{api_key}}", type: "string" }] },
    variable: [
      { key: "baseUrl", value: baseUrl },
      { key: "api_key", value: "" },
      ...Object.entries(CONSTANTS).map(([key, value]) => ({ key, value })),
    ],
    item: SCENARIO.map((folder) => ({
      name: folder.name,
      item: folder.steps.map((step) => requestItem(document, operations.get(step.operationId)!, step, functions)),
    })),
  };
}

/** The document's operations by operationId, internal ones aside. */
function publicOperations(document: Document): Map<string, Located> {
  const operations = new Map<string, Located>();
  for (const [path, methods] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(methods)) {
      if (!HTTP_METHODS.has(method) || operation.tags?.some((tag) => tag.startsWith("Internal"))) continue;
      const id = operation.operationId;
      if (!id) throw new Error(`Postman collection: ${method.toUpperCase()} ${path} has no operationId`);
      if (operations.has(id)) throw new Error(`Postman collection: operationId ${id} is not unique`);
      operations.set(id, { method, path, operation });
    }
  }
  return operations;
}

/** Every public operation of the document placed exactly once in the scenario, and nothing placed that it lacks. */
export function assertScenarioCovers(source: unknown): void {
  const operations = publicOperations(source as Document);
  const placed = SCENARIO.flatMap((folder) => folder.steps.map((step) => step.operationId));
  const twice = placed.filter((id, index) => placed.indexOf(id) !== index);
  const unknown = placed.filter((id) => !operations.has(id));
  const missing = [...operations.keys()].filter((id) => !placed.includes(id));
  const problems = [
    ...missing.map((id) => `${id} is not placed in the scenario`),
    ...twice.map((id) => `${id} is placed more than once`),
    ...unknown.map((id) => `${id} is not an operation of the document`),
  ];
  if (problems.length > 0) fail(`the scenario (postman-scenario/scenario.ts): ${problems.join("; ")}`);
}

function requestItem(document: Document, located: Located, step: Step, functions: Declarations) {
  const { method, path, operation } = located;
  const where = `${step.operationId} (${method.toUpperCase()} ${path})`;
  const parameters = operation.parameters ?? [];
  const segments = path
    .split("/")
    .filter(Boolean)
    .map((segment) => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      if (!name) return segment;
      const parameter = parameters.find((p) => p.in === "path" && p.name === name);
      return step.path?.[name] ?? idVariable(parameter?.schema?.example) ?? fail(`${where}: no value for {${name}}`);
    });
  const query = parameters
    .filter((p) => p.in === "query" && (p.required || step.query?.[p.name] !== undefined))
    .map((p) => ({
      key: p.name,
      value: step.query?.[p.name] ?? idVariable(p.schema?.example) ?? fail(`${where}: no value for ?${p.name}`),
    }));
  for (const name of Object.keys({ ...step.path, ...step.query })) {
    if (!parameters.some((p) => p.name === name)) fail(`${where}: the document has no parameter ${name}`);
  }
  const body = requestBody(document, operation, step, where);
  const headers = [
    ...(body === undefined ? [] : [{ key: "Content-Type", value: "application/json" }]),
    ...(method === "get" ? [] : [{ key: "Idempotency-Key", value: "{{$guid}}" }]),
    ...Object.entries(step.headers ?? {}).map(([key, value]) => ({ key, value })),
  ];
  const search = query.length ? `?${query.map(({ key, value }) => `${key}=${value}`).join("&")}` : "";
  const status = step.status ?? successStatus(operation, where);
  return {
    id: step.operationId,
    name: operation.summary ?? step.operationId,
    event: [
      ...(step.before ? [{ listen: "prerequest", script: scriptOf(prerequest(step.before), functions) }] : []),
      { listen: "test", script: scriptOf(tests(document, operation, step, status, where), functions) },
    ],
    request: {
      method: method.toUpperCase(),
      description: `${operation.description ?? ""}\n\noperationId: \`${step.operationId}\``.trim(),
      header: headers,
      url: {
        raw: `{{baseUrl}}/${segments.join("/")}${search}`,
        host: ["{{baseUrl}}"],
        path: segments,
        ...(query.length ? { query } : {}),
      },
      ...(body === undefined
        ? {}
        : { body: { mode: "raw", raw: JSON.stringify(body, null, 2), options: { raw: { language: "json" } } } }),
    },
  };
}

/** The example body (the schema's own, its component's, or the chosen `oneOf` alternative's) with ids as variables. */
function requestBody(document: Document, operation: Operation, step: Step, where: string): unknown {
  const schema = operation.requestBody?.content?.["application/json"]?.schema;
  if (!schema) {
    if (step.body || step.example) fail(`${where}: the operation takes no JSON body`);
    return undefined;
  }
  const chosen = step.example ? alternative(schema, step.example, where) : schema;
  const example = chosen.example ?? resolve(document, chosen).example;
  if (example === undefined) fail(`${where}: the request body has no example`);
  return { ...(variablesForIds(example) as object), ...step.body };
}

function alternative(schema: Schema, name: string, where: string): Schema {
  const ref = `#/components/schemas/${name}`;
  return (
    [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])].find((s) => s.$ref === ref) ??
    fail(`${where}: ${name} is not an alternative of the request body`)
  );
}

/** `sub_01JD…` → `{{subuser_id}}`, through the examples' id prefixes. */
function idVariable(example: unknown): string | undefined {
  if (typeof example !== "string") return undefined;
  const prefix = /^([a-z]+)_[0-9A-Za-z]+$/.exec(example)?.[1];
  const variable = prefix ? ID_VARIABLES[prefix] : undefined;
  return variable ? `{{${variable}}}` : undefined;
}

function variablesForIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(variablesForIds);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, variablesForIds(item)]));
  }
  return idVariable(value) ?? value;
}

function successStatus(operation: Operation, where: string): number {
  const status = Object.keys(operation.responses ?? {}).find((code) => /^2\d\d$/.test(code));
  return status ? Number(status) : fail(`${where}: no 2xx response is documented`);
}

/** How a test names a response schema: `Subuser`, `an array of IspProxyLine`, `a page of Order`. */
function describe(schema: Schema): string {
  const name = (s: Schema | undefined) => s?.$ref?.split("/").pop();
  const items = name(schema.items);
  const page = name(schema.properties?.data?.items);
  // A `/v1` JSON object is sent as `allOf: [<resource>, Livemode]`: it is named after the resource.
  if (schema.allOf?.[0]) return describe(schema.allOf[0]);
  return name(schema) ?? (items && `an array of ${items}`) ?? (page && `a page of ${page}`) ?? "as documented";
}

function resolve(document: Document, schema: Schema): Schema {
  const name = schema.$ref?.replace("#/components/schemas/", "");
  if (name === undefined) return schema;
  return document.components?.schemas?.[name] ?? fail(`no component schema ${name}`);
}

function fail(message: string): never {
  throw new Error(`Postman collection: ${message}`);
}

// ---------------------------------------------------------------------------------------------------------------
// Scripts
// ---------------------------------------------------------------------------------------------------------------

/** The declarations of the script functions by name: each an exported function of the compiled module. */
type Declarations = Map<string, string>;

function declarations(compiled: string): Declarations {
  const found: Declarations = new Map();
  for (const chunk of compiled.split(/^(?=export function )/m)) {
    const text = chunk.trim();
    if (!text) continue;
    const name = /^export function (\w+)\(/.exec(text)?.[1];
    // Another top-level statement would start a line of its own, unindented.
    if (!name || !text.endsWith("\n}") || /\n[^\s}]/.test(text)) {
      fail(`script-functions.ts may hold only exported function declarations, not: ${text.slice(0, 80)}`);
    }
    found.set(name, text.slice("export ".length));
  }
  return found;
}

/** A script's statements, then the declarations of the functions they call, and of those these call in turn. */
function scriptOf(statements: string[], functions: Declarations) {
  const called = new Set<string>();
  const unread = [statements.join("\n")];
  while (unread.length > 0) {
    const text = unread.pop()!;
    for (const [name, source] of functions) {
      if (called.has(name) || !new RegExp(`\\b${name}\\(`).test(text)) continue;
      called.add(name);
      unread.push(source);
    }
  }
  const sources = [...functions].filter(([name]) => called.has(name)).map(([, source]) => source);
  return { type: "text/javascript", exec: [...statements, ...sources.flatMap((source) => source.split("\n"))] };
}

function prerequest(before: NonNullable<Step["before"]>): string[] {
  return Object.entries(before).map(([name, call]) => `pm.variables.set("${name}", ${call}());`);
}

/** A JS literal of an expected value; a string with `{{…}}` is resolved when the script runs. */
function expected(value: unknown): string {
  return typeof value === "string" && value.includes("{{")
    ? `pm.variables.replaceIn(${JSON.stringify(value)})`
    : JSON.stringify(value);
}

function tests(document: Document, operation: Operation, step: Step, status: number, where: string): string[] {
  const content = operation.responses?.[String(status)]?.content ?? {};
  const responseSchema = content["application/json"]?.schema;
  if (!responseSchema) {
    const types = Object.keys(content);
    if (types.length === 0) fail(`${where}: no response body is documented for ${status}`);
    return fileTests(status, types);
  }
  const described = describe(responseSchema);
  const expectations = Object.entries(step.expect ?? {}).map(
    ([path, value]) =>
      `pm.test("${path} is ${JSON.stringify(value).replaceAll('"', "'")}", () => pm.expect(pick(body, ${JSON.stringify(path)})).to.eql(${expected(value)}));`,
  );
  const checks = step.viaGateway ? gatewayChecks(expectations) : expectations;
  const success = [
    `pm.test("status is ${status}", () => pm.response.to.have.status(${status}));`,
    `pm.test("body is ${described}", () => pm.expect(conform(body, ${JSON.stringify(compactShape(document, responseSchema))}, "body", [])).to.eql([]));`,
    ...Object.entries(step.capture ?? {}).map(
      ([name, path]) =>
        `pm.test("captures ${name}", () => { const value = pick(body, ${JSON.stringify(path)}); pm.expect(value).to.be.a("string").and.not.empty; pm.collectionVariables.set("${name}", value); });`,
    ),
    ...Object.entries(step.remember ?? {}).map(
      ([name, path]) => `pm.collectionVariables.set("${name}", JSON.stringify(pick(body, ${JSON.stringify(path)})));`,
    ),
    ...(step.listed
      ? [
          `pm.test("lists {{${step.listed}}}", () => pm.expect((Array.isArray(body) ? body : body.data).map((item) => item.id)).to.include(pm.collectionVariables.get("${step.listed}")));`,
        ]
      : []),
    ...(step.poll ? pollUntil(step.poll, checks) : checks),
  ];
  return [
    `pm.test("has X-Request-Id", () => pm.response.to.have.header("X-Request-Id"));`,
    "let body;",
    "try { body = pm.response.json(); } catch (error) { body = undefined; }",
    ...(step.sandboxOnly ? onlyIn("sandbox", success) : step.liveOnly ? onlyIn("live", success) : success),
  ];
}

/**
 * The checks of an operation of one mode alone (by the `livemode` that `getAccount` remembered): a test helper
 * (sandbox) answers a live key 403 `sandbox_key_required`, the account's people (live) a sandbox key 403
 * `live_key_required`; the mode it serves gets the operation's own checks.
 */
function onlyIn(mode: "sandbox" | "live", success: string[]): string[] {
  const [refused, code] = mode === "sandbox" ? ["live", "sandbox_key_required"] : ["sandbox", "live_key_required"];
  return [
    `if (pm.collectionVariables.get("livemode") ${mode === "sandbox" ? "!==" : "==="} "false") {`,
    `  pm.test("status is 403 (a ${refused} key)", () => pm.response.to.have.status(403));`,
    `  pm.test("code is '${code}'", () => pm.expect(body && body.code).to.eql("${code}"));`,
    "} else {",
    ...success.map((line) => `  ${line}`),
    "}",
  ];
}

/**
 * A proxy test's checks, where the API has no gateway it can reach (a deployment without one beside it): the run
 * says so as a skipped test instead of failing. The answer itself (status, shape) is still checked.
 */
function gatewayChecks(checks: string[]): string[] {
  return [
    'if (body && body.error_code === "gateway-unreachable") pm.collectionVariables.set("no_gateway", "true");',
    'if (pm.collectionVariables.get("no_gateway") === "true") {',
    `  pm.test.skip("no gateway reachable: the proxy test's checks are skipped", () => {});`,
    "} else {",
    ...checks.map((line) => `  ${line}`),
    "}",
  ];
}

/** A file answer (not JSON): its status, request id, one of the documented media types and an attachment name. */
function fileTests(status: number, types: string[]): string[] {
  const mediaTypes = types.map((type) => type.split(";")[0]);
  return [
    `pm.test("status is ${status}", () => pm.response.to.have.status(${status}));`,
    `pm.test("has X-Request-Id", () => pm.response.to.have.header("X-Request-Id"));`,
    `pm.test("is a file of a documented type", () => pm.expect(${JSON.stringify(mediaTypes)}).to.include((pm.response.headers.get("Content-Type") || "").split(";")[0]));`,
    `pm.test("is an attachment", () => pm.expect(pm.response.headers.get("Content-Disposition") || "").to.match(/^attachment; filename=/));`,
  ];
}

/**
 * Repeats the request until the body matches `until`. Then the checks run; if time ran out first, a single failed
 * test says what did not happen and within what bound, instead of every check failing on an unfinished resource.
 */
function pollUntil(poll: NonNullable<Step["poll"]>, checks: string[]): string[] {
  const attempts = Math.ceil((poll.seconds * 1000) / POLL_INTERVAL_MS);
  const awaited = Object.entries(poll.until)
    .map(([path, value]) => `${path} ${JSON.stringify(value).replaceAll('"', "'")}`)
    .join(", ");
  const pending = Object.entries(poll.until)
    .map(([path, value]) => `pick(body, ${JSON.stringify(path)}) !== ${expected(value)}`)
    .join(" || ");
  const timedOut = `${awaited} not reached within ${poll.seconds} s (${poll.bound})`.replaceAll('"', "'");
  const reached = Object.entries(poll.until).map(
    ([path, value]) =>
      `pm.test("${path} becomes ${JSON.stringify(value).replaceAll('"', "'")} within ${poll.seconds} s", () => pm.expect(pick(body, ${JSON.stringify(path)})).to.eql(${expected(value)}));`,
  );
  return [
    'const attempt = Number(pm.collectionVariables.get("poll_attempt") || 0);',
    `if ((${pending}) && attempt < ${attempts}) {`,
    '  pm.collectionVariables.set("poll_attempt", attempt + 1);',
    "  pm.execution.setNextRequest(pm.info.requestId);",
    `  setTimeout(() => {}, ${POLL_INTERVAL_MS});`,
    `} else if (${pending}) {`,
    '  pm.collectionVariables.unset("poll_attempt");',
    `  pm.test("${timedOut}", () => pm.expect.fail("last seen: " + JSON.stringify(body).slice(0, 300)));`,
    "} else {",
    '  pm.collectionVariables.unset("poll_attempt");',
    ...[...reached, ...checks].map((line) => `  ${line}`),
    "}",
  ];
}

/** The compact form of a response schema that the test scripts check bodies against (`conform`). */
function compactShape(document: Document, schema: Schema, seen: string[] = []): Shape {
  if (schema.$ref) {
    if (seen.includes(schema.$ref)) return {};
    return compactShape(document, resolve(document, schema), [...seen, schema.$ref]);
  }
  const nested = (s: Schema) => compactShape(document, s, seen);
  const alternatives = schema.oneOf ?? schema.anyOf;
  return {
    ...(schema.type ? { t: [schema.type].flat() } : {}),
    ...(schema.enum ? { e: schema.enum } : {}),
    ...(schema.pattern ? { x: schema.pattern } : {}),
    ...(schema.format === "date-time" ? { d: true as const } : {}),
    ...(schema.required?.length ? { r: schema.required } : {}),
    ...(schema.properties
      ? { p: Object.fromEntries(Object.entries(schema.properties).map(([key, s]) => [key, nested(s)])) }
      : {}),
    ...(schema.items ? { i: nested(schema.items) } : {}),
    ...(schema.allOf ? { all: schema.allOf.map(nested) } : {}),
    ...(alternatives ? { any: alternatives.map(nested) } : {}),
  };
}

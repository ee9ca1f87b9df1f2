/**
 * The Postman v2.1 collection of the public API: a runnable end-to-end scenario derived from the OpenAPI document
 * (`npx newman run <origin>/v1/postman/collection.json --env-var api_key=<key>`).
 *
 * The document gives each request its method, URL, example body and expected response shape; the scenario below
 * (the only hand-written part) gives the order, the values the examples cannot know (ids captured from earlier
 * responses) and the extra checks. Every public operation must be placed exactly once: a new route that the
 * scenario does not place makes the generator throw, so it cannot silently be left out. The scripts' checks are
 * generated here from the scenario; the functions they call are code, in postman-scripts/.
 */
import { expressionSource, type Postman, type ScriptFunctions, type Shape, withDefinitions } from "./postman-scripts";

// What the scenario's `before` expressions use of the Postman sandbox. Declared rather than imported: the
// expressions are sent as text (postman-scripts), so their names must reach the bundle as written.
declare const pm: Postman;
declare const totp: ScriptFunctions["totp"];
declare const buyTestBandwidth: ScriptFunctions["buyTestBandwidth"];

// ---------------------------------------------------------------------------------------------------------------
// The scenario
// ---------------------------------------------------------------------------------------------------------------

/** One request of the scenario; everything but `operationId` is optional. */
interface Step {
  operationId: string;
  /** The expected status; default: the operation's first documented 2xx. */
  status?: number;
  /** For a `oneOf` request body: the component schema whose example to send. */
  example?: string;
  /** Fields merged over the example body. */
  body?: Record<string, unknown>;
  /** Path parameters; default: the variable of the parameter example's id prefix (`sub_…` → `{{subuser_id}}`). */
  path?: Record<string, string>;
  /** Query parameters; a required one defaults like a path parameter. */
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** Request-local variables set before the request: name → an expression run in the Postman sandbox. */
  before?: Record<string, () => unknown>;
  /** Collection variables captured from the response: name → dotted path in the body (`details.batch_id`). */
  capture?: Record<string, string>;
  /** Dotted path in the body → expected value; `{{var}}` in a string is resolved at run time. */
  expect?: Record<string, unknown>;
  /** The response is a list (`data`, or the body itself) that must hold an item whose `id` is this variable. */
  listed?: string;
  /**
   * Repeat the request (every 3 s, up to `seconds`) until the body matches `until`; then check it. Past `seconds`,
   * one failed test says what did not happen in time and why that long (`bound`), and the checks are skipped.
   */
  poll?: { until: Record<string, unknown>; seconds: number; bound: string };
  /** Collection variables set to a field of the response whatever its type (`livemode`), for later steps. */
  remember?: Record<string, string>;
  /** A test helper: a live key gets 403 `sandbox_key_required`, a sandbox key the documented success. */
  sandboxOnly?: true;
  /** Checks that need a proxy gateway beside the API: skipped ("no gateway reachable"), not failed, without one. */
  viaGateway?: true;
}

interface Folder {
  name: string;
  steps: Step[];
}

/** The id prefixes of the document's examples, and the variable each is captured into. */
const ID_VARIABLES: Record<string, string> = {
  sub: "subuser_id",
  ord: "order_id",
  bat: "batch_id",
  ip: "ip_id",
  sbn: "subscription_id",
  wl: "whitelist_entry_id",
  pxt: "proxy_test_id",
  rep: "report_id",
  run: "run_id",
};

/** Collection variables besides `baseUrl` and `api_key`. */
const CONSTANTS = {
  /** A well-formed session id that never exists: sessions come only from gateway traffic, not from this API. */
  unknown_session_id: "ses_00000000000000000000000000",
  /** A well-formed traffic spike id that never exists: spikes come only from traffic. */
  unknown_spike_id: "spk_00000000000000000000000000",
};

/** Unique per run, so that a second run on the same account does not collide with the first. */
const RUN_LABEL = "postman-{{$timestamp}}";

const SESSION_NOT_FOUND = {
  status: 404,
  path: { id: "{{unknown_session_id}}" },
  expect: { code: "session_not_found" },
};

const WEBHOOK_ENDPOINT = { id: "{{webhook_endpoint_id}}" };

/**
 * The dependency-ordered scenario: create before read, read before update, delete last. It costs one ISP order
 * (5 IPs × 1 month) and one renewal; every resource it creates is deleted or released at the end, and MFA is left
 * off, so it can run again on the same account.
 */
const SCENARIO: Folder[] = [
  {
    name: "Account and MFA",
    steps: [
      { operationId: "getAccount", capture: { account_id: "id" }, remember: { livemode: "livemode" } },
      { operationId: "updateAccount", expect: { id: "{{account_id}}", company: "Acme Data Ltd" } },
      {
        operationId: "enrollMfa",
        capture: { mfa_secret: "secret", mfa_recovery_code: "recovery_codes.0" },
        expect: { status: "pending_verification" },
      },
      {
        operationId: "verifyMfa",
        before: { mfa_totp: () => totp(pm.collectionVariables.get("mfa_secret")!) },
        body: { code: "{{mfa_totp}}" },
        expect: { mfa_enabled: true, mfa_method: "totp" },
      },
      {
        operationId: "disableMfa",
        headers: { "X-MFA-Code": "{{mfa_recovery_code}}" },
        expect: { mfa_enabled: false },
      },
      { operationId: "getSecurityInfo", expect: { mfa_enabled: false, mfa_pending: false } },
    ],
  },
  {
    name: "Sub-users",
    steps: [
      {
        operationId: "createSubuser",
        body: { label: RUN_LABEL, products: ["residential", "isp"] },
        capture: { subuser_id: "id", subuser_label: "label", subuser_name: "name" },
        expect: { status: "active", "products.length": 2 },
      },
      { operationId: "listSubusers", query: { label_contains: "postman" }, listed: "subuser_id" },
      { operationId: "getSubuser", expect: { id: "{{subuser_id}}", label: "{{subuser_label}}" } },
      { operationId: "updateSubuser", expect: { id: "{{subuser_id}}", concurrent_max: 50 } },
      {
        operationId: "rotateSubuserPassword",
        capture: { subuser_password: "password" },
        expect: { id: "{{subuser_id}}" },
      },
    ],
  },
  {
    name: "Whitelists",
    steps: [
      {
        operationId: "createWhitelistEntry",
        capture: { whitelist_entry_id: "id" },
        expect: { subuser: "{{subuser_id}}", product: "residential", ip: "203.0.113.0/24" },
      },
      { operationId: "listWhitelistEntries", listed: "whitelist_entry_id" },
    ],
  },
  {
    name: "Orders",
    steps: [
      { operationId: "getIspInventory", query: { country: "US" } },
      {
        operationId: "quoteOrder",
        example: "IspOrderCreate",
        body: { quantity: 5, months: 1 },
        expect: { product: "isp", total_usd: 30, orderable: true },
      },
      {
        operationId: "createOrder",
        example: "IspOrderCreate",
        body: { quantity: 5, months: 1 },
        capture: { order_id: "id", batch_id: "details.batch_id" },
        expect: { product: "isp", total_usd: 30, "details.quantity": 5 },
      },
      { operationId: "getOrder", expect: { id: "{{order_id}}", "details.batch_id": "{{batch_id}}" } },
      { operationId: "listOrders", listed: "order_id" },
      { operationId: "getBandwidthBalance", path: { product: "residential" }, expect: { product: "residential" } },
      // A budget without a hard stop, removed at once: the scenario's charges are never refused by it.
      { operationId: "getBudget", expect: { currency: "USD" } },
      {
        operationId: "setBudget",
        body: { amount_usd: 1000, hard_stop: false },
        expect: { amount_usd: 1000, hard_stop: false, "thresholds_percent.length": 3 },
      },
      { operationId: "deleteBudget", expect: { hard_stop: false, "thresholds_percent.length": 0 } },
    ],
  },
  {
    name: "ISP batch",
    steps: [
      {
        operationId: "getIspBatch",
        poll: {
          until: { status: "active" },
          seconds: 300,
          bound: "the API reference: provisioning takes 1–5 minutes in tier-1 countries",
        },
        expect: { quantity: 5 },
      },
      { operationId: "listIspBatches", listed: "batch_id" },
      {
        operationId: "listIspBatchIps",
        query: { format: "json" },
        capture: { ip_id: "0.ip_id" },
        expect: { length: 5 },
      },
      { operationId: "replaceIspIp", expect: { "replaced.ip_id": "{{ip_id}}", free: true, charged_usd: 0 } },
      { operationId: "refreshIspBatch", expect: { id: "{{batch_id}}", refresh_used_this_period: true } },
      { operationId: "rotateIspBatchPassword", expect: { id: "{{batch_id}}" } },
      { operationId: "renewIspBatch", expect: { id: "{{batch_id}}", status: "active" } },
      {
        operationId: "addIspBatchWhitelistEntry",
        capture: { batch_whitelist_entry_id: "id" },
        expect: { batch_id: "{{batch_id}}" },
      },
      { operationId: "listIspBatchWhitelist", listed: "batch_whitelist_entry_id" },
    ],
  },
  {
    name: "Subscriptions",
    steps: [
      {
        operationId: "createSubscription",
        capture: { subscription_id: "id" },
        expect: { product: "isp", batch_id: "{{batch_id}}", status: "active", cycle: "monthly" },
      },
      { operationId: "getSubscription", expect: { id: "{{subscription_id}}" } },
      { operationId: "listSubscriptions", listed: "subscription_id" },
      { operationId: "updateSubscription", expect: { cycle: "monthly", "pending.cycle": "annual" } },
      { operationId: "pauseSubscription", expect: { status: "paused" } },
      { operationId: "cancelSubscription", expect: { status: "cancelling" } },
    ],
  },
  {
    name: "Sessions and traffic",
    steps: [
      { operationId: "listResidentialSessions", query: { subuser: "{{subuser_id}}" }, expect: { "data.length": 0 } },
      { operationId: "getResidentialSession", ...SESSION_NOT_FOUND },
      { operationId: "terminateResidentialSession", ...SESSION_NOT_FOUND },
      { operationId: "listMobileSessions", query: { subuser: "{{subuser_id}}" }, expect: { "data.length": 0 } },
      { operationId: "getMobileSession", ...SESSION_NOT_FOUND },
      { operationId: "terminateMobileSession", ...SESSION_NOT_FOUND },
      {
        operationId: "getTraffic",
        path: { product: "residential" },
        before: {
          traffic_from: () => new Date(Date.now() - 24 * 3600 * 1000).toISOString(),
          traffic_to: () => new Date().toISOString(),
        },
        query: { from: "{{traffic_from}}", to: "{{traffic_to}}", subuser: "{{subuser_id}}" },
      },
      { operationId: "listRequests", path: { product: "residential" }, query: { subuser: "{{subuser_id}}" } },
      // A WebSocket: a plain request gets the JSON error that says so.
      {
        operationId: "tailRequests",
        path: { product: "residential" },
        status: 426,
        expect: { code: "websocket_required" },
      },
      { operationId: "listSubuserSources", expect: { "data.length": 0 } },
      { operationId: "listTrafficSpikes", query: { subuser: "{{subuser_id}}" }, expect: { "data.length": 0 } },
      {
        operationId: "acknowledgeTrafficSpike",
        status: 404,
        path: { id: "{{unknown_spike_id}}" },
        expect: { code: "traffic_spike_not_found" },
      },
    ],
  },
  {
    // A live key tests through the gateway (`npm run dev` runs a local one; its echo target uses no credit); a
    // deployment without a reachable gateway skips the checks. A sandbox key gets the simulated probe.
    name: "Proxy test",
    steps: [
      { operationId: "getGateway", expect: { username_prefix: "user" } },
      {
        operationId: "runProxyTest",
        body: { username: "user_{{subuser_name}}-type-res-region-us", password: "{{subuser_password}}" },
        capture: { proxy_test_id: "id" },
        expect: { auth_ok: true, "parsed.subuser": "{{subuser_id}}", "parsed.region": "us" },
        viaGateway: true,
      },
      { operationId: "listProxyTests", listed: "proxy_test_id" },
      { operationId: "getProxyTest", expect: { id: "{{proxy_test_id}}", auth_ok: true }, viaGateway: true },
    ],
  },
  {
    // A live key gets 403 from each; a sandbox key makes the outside world happen (test/sandbox).
    name: "Test helpers (sandbox keys only)",
    steps: [
      { operationId: "topUpTestBalance", sandboxOnly: true },
      { operationId: "generateTestTraffic", sandboxOnly: true, expect: { subuser: "{{subuser_id}}", requests: 500 } },
      {
        operationId: "startTestSession",
        sandboxOnly: true,
        // A session needs bandwidth: a sandbox key first buys 1 GB with the sandbox's simulated money.
        before: { test_bandwidth: () => buyTestBandwidth() },
        expect: { subuser: "{{subuser_id}}" },
      },
      { operationId: "expireTestIspBatch", sandboxOnly: true, expect: { id: "{{batch_id}}" } },
      { operationId: "renewTestSubscription", sandboxOnly: true, expect: { id: "{{subscription_id}}" } },
    ],
  },
  {
    // An on-demand run of today's sub-user inventory, mailed (wrangler dev keeps the mail locally), then polled.
    name: "Reports",
    steps: [
      { operationId: "createReport", capture: { report_id: "id" }, expect: { type: "traffic", format: "csv" } },
      { operationId: "listReports", listed: "report_id" },
      { operationId: "getReport", expect: { id: "{{report_id}}" } },
      { operationId: "updateReport", expect: { id: "{{report_id}}", schedule: null } },
      {
        operationId: "runReport",
        before: { today: () => new Date().toISOString().slice(0, 10) },
        body: { from: "{{today}}", to: "{{today}}" },
        capture: { run_id: "run_id" },
        expect: { status: "queued" },
      },
      {
        operationId: "getReportRun",
        poll: {
          until: { status: "completed" },
          seconds: 60,
          bound: "a report of one account's sub-users runs in seconds",
        },
        expect: { run_id: "{{run_id}}", report_id: "{{report_id}}" },
        capture: { download_url: "download_url" },
      },
      {
        operationId: "downloadReportRunFile",
        before: {
          link_exp: () => pm.collectionVariables.get("download_url")!.match(/[?&]exp=([^&]+)/)![1],
          link_sig: () => pm.collectionVariables.get("download_url")!.match(/[?&]sig=([^&]+)/)![1],
        },
        path: { id: "{{run_id}}" },
        query: { exp: "{{link_exp}}", sig: "{{link_sig}}" },
      },
      { operationId: "deleteReport", expect: { id: "{{report_id}}", deleted: true } },
    ],
  },
  {
    // The example URL cannot be reached from a run, so the test delivery fails: the test still answers 200
    // with the failed attempt, and the retry does the same.
    name: "Webhooks and events",
    steps: [
      {
        operationId: "createWebhookEndpoint",
        capture: { webhook_endpoint_id: "id" },
        expect: { status: "enabled", "events.0": "order.completed" },
      },
      { operationId: "listWebhookEndpoints", listed: "webhook_endpoint_id" },
      { operationId: "getWebhookEndpoint", path: WEBHOOK_ENDPOINT, expect: { id: "{{webhook_endpoint_id}}" } },
      { operationId: "updateWebhookEndpoint", path: WEBHOOK_ENDPOINT, expect: { status: "enabled" } },
      { operationId: "rotateWebhookEndpointSecret", path: WEBHOOK_ENDPOINT, expect: { id: "{{webhook_endpoint_id}}" } },
      {
        operationId: "testWebhookEndpoint",
        path: WEBHOOK_ENDPOINT,
        capture: { webhook_delivery_id: "id", webhook_event_id: "event_id" },
        expect: { event_type: "webhook.test", attempt_count: 1 },
      },
      { operationId: "listWebhookDeliveries", path: WEBHOOK_ENDPOINT, listed: "webhook_delivery_id" },
      {
        operationId: "retryWebhookDelivery",
        path: { ...WEBHOOK_ENDPOINT, delivery_id: "{{webhook_delivery_id}}" },
        expect: { id: "{{webhook_delivery_id}}", attempt_count: 2 },
      },
      { operationId: "listEvents", query: { type: "webhook.test" }, listed: "webhook_event_id" },
      { operationId: "getEvent", path: { id: "{{webhook_event_id}}" }, expect: { type: "webhook.test" } },
      { operationId: "deleteWebhookEndpoint", path: WEBHOOK_ENDPOINT, expect: { deleted: true } },
    ],
  },
  {
    name: "API keys",
    steps: [
      {
        operationId: "createApiKey",
        body: { name: RUN_LABEL, scopes: { billing: "read", traffic: "read" } },
        capture: { api_key_id: "id" },
        expect: { "scopes.billing": "read" },
      },
      { operationId: "listApiKeys", listed: "api_key_id" },
      { operationId: "getCurrentApiKey", expect: { "scopes.api_keys": "write" } },
      { operationId: "getApiKey", path: { id: "{{api_key_id}}" }, expect: { id: "{{api_key_id}}" } },
      {
        operationId: "updateApiKey",
        path: { id: "{{api_key_id}}" },
        body: { name: "read-only exporter" },
        expect: { name: "read-only exporter" },
      },
      {
        operationId: "rotateApiKey",
        path: { id: "{{api_key_id}}" },
        body: { grace_seconds: 0 },
        expect: { id: "{{api_key_id}}", previous_token_expires_at: null },
      },
      { operationId: "deleteApiKey", path: { id: "{{api_key_id}}" }, expect: { deleted: true } },
    ],
  },
  {
    name: "Audit log",
    steps: [
      {
        operationId: "listAuditEvents",
        query: { resource: "{{api_key_id}}" },
        expect: { "data.0.action": "api_key.revoked", "data.0.resource_id": "{{api_key_id}}" },
      },
    ],
  },
  {
    name: "Clean-up",
    steps: [
      {
        operationId: "removeIspBatchWhitelistEntry",
        path: { entry_id: "{{batch_whitelist_entry_id}}" },
        expect: { id: "{{batch_whitelist_entry_id}}", deleted: true },
      },
      { operationId: "releaseIspBatch", expect: { id: "{{batch_id}}", status: "released" } },
      { operationId: "deleteWhitelistEntry", expect: { id: "{{whitelist_entry_id}}", deleted: true } },
      { operationId: "deleteSubuser", expect: { id: "{{subuser_id}}", deleted: true } },
    ],
  },
];

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
 * every request) as collection variables, one folder per scenario stage.
 */
export function postmanCollection(source: unknown, baseUrl: string) {
  const document = source as Document;
  const operations = publicOperations(document);
  assertScenarioCovers(operations);
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
      item: folder.steps.map((step) => requestItem(document, operations.get(step.operationId)!, step)),
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

/** Every operation placed exactly once, and nothing placed that the document lacks. */
function assertScenarioCovers(operations: Map<string, Located>): void {
  const placed = SCENARIO.flatMap((folder) => folder.steps.map((step) => step.operationId));
  const twice = placed.filter((id, index) => placed.indexOf(id) !== index);
  const unknown = placed.filter((id) => !operations.has(id));
  const missing = [...operations.keys()].filter((id) => !placed.includes(id));
  const problems = [
    ...missing.map((id) => `${id} is not placed in the scenario`),
    ...twice.map((id) => `${id} is placed more than once`),
    ...unknown.map((id) => `${id} is not an operation of the document`),
  ];
  if (problems.length > 0) throw new Error(`Postman collection (src/api-docs/postman.ts): ${problems.join("; ")}`);
}

function requestItem(document: Document, located: Located, step: Step) {
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
      ...(step.before ? [{ listen: "prerequest", script: scriptOf(prerequest(step.before)) }] : []),
      { listen: "test", script: scriptOf(tests(document, operation, step, status, where)) },
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

/** A script's statements, with the definitions of the script functions they call. */
function scriptOf(statements: string[]) {
  return { type: "text/javascript", exec: withDefinitions(statements) };
}

function prerequest(before: NonNullable<Step["before"]>): string[] {
  return Object.entries(before).map(
    ([name, expression]) => `pm.variables.set("${name}", ${expressionSource(expression)});`,
  );
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
    ...(step.sandboxOnly ? sandboxOnly(success) : success),
  ];
}

/**
 * A test helper's checks: with a live key (the `livemode` that `getAccount` remembered), the 403 every helper
 * answers it; with a sandbox key, what the helper does.
 */
function sandboxOnly(success: string[]): string[] {
  return [
    'if (pm.collectionVariables.get("livemode") !== "false") {',
    '  pm.test("status is 403 (a live key)", () => pm.response.to.have.status(403));',
    '  pm.test("code is \'sandbox_key_required\'", () => pm.expect(body && body.code).to.eql("sandbox_key_required"));',
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

import { beforeAll, describe, expect, it } from "vitest";
import { domainContext } from "../../src/domain/context";
import { announceTrafficSpikes } from "../../src/domain/subusers/traffic-spikes";
import { ANY_KEY_SCOPE } from "../../src/platform/route-definitions";
import { type KeyAccess, type KeyArea, type KeyScopes, type Product, scopeAllows } from "../../src/vocabulary";
import { issueKey, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { admin, call, env, json } from "../helpers/http";
import { batchIps, orderBatch, type TestBatch } from "../helpers/isp";
import { type Operation, type Parameter, publicOperations } from "../helpers/operations";
import { sandboxOf } from "../helpers/sandbox";
import { createSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, settleUsage, usageRecord } from "../helpers/usage";
import { roomyAccount, spikeAlert, startSession } from "../helpers/walk-world";

/**
 * The scope walk: every operation of the public OpenAPI document, read at run time (a route added later is walked
 * too), called by narrower keys against one account that holds resources of every product (and its sandbox, for the
 * sandbox-only test helpers, which a live key is refused before anything).
 *
 * (a) A key of one product (residential only, ISP only) is handed the ids of the other products' resources, each in
 * turn: no 2xx answer (nor a live tail's frame) shows an id or name of a resource outside its product scope, and a
 * direct read or write of one is 403 `subuser_scope_mismatch` (or a documented 404), never 2xx, never 5xx. Reads are
 * also made of what the key covers, filtered by what it does not.
 * (b) A key without the operation's area scope (`x-key-scope`), e.g. only `traffic:read`, is refused 403
 * `insufficient_scope`, with no data, and nothing the full key reads changes.
 * Scope before reading: a refusal for scope is the same with ids never issued in place of the world's.
 * Retries: each write on a resource is applied with the account's full key, then tried again by the narrower keys
 * (acknowledging an acknowledged episode, cancelling a cancelled subscription, deleting a deleted thing): still
 * refused, never a 200 with data.
 * Another account's ids answer exactly as ids never issued.
 */

// ── The world: one account with resources of every product ───────────────────────────────────────

/** Who may see a resource: a key covering its product, or ("account") only a key without a product scope. */
type Owner = Product | "account";

interface Resource {
  /** The prefix of its id (`sub`, `bat`…; `bwl`: an ISP batch's whitelist entry); null: other text naming it. */
  kind: string | null;
  owner: Owner;
  /** Its id, or the text (a gateway name, a logged request id) that must not reach a key outside its scope. */
  id: string;
  /** Shown to every key whatever its product scope (API keys belong to no product). */
  open?: boolean;
}

interface World {
  name: "live" | "sandbox";
  /** The account's full key. */
  token: string;
  resources: Resource[];
  /** Sub-users' gateway names by id (a proxy test names its sub-user by them). */
  names: Record<string, string>;
  /** Fresh usage records, one per product (live tails are watched while they arrive). */
  traffic?: () => Array<Record<string, unknown>>;
  accountId: string;
}

interface Walker {
  name: string;
  token: string;
  products: Product[] | null;
  scopes: KeyScopes | null;
}

const PRODUCTS: Product[] = ["isp", "residential", "mobile"];
const BANDWIDTH: Product[] = ["residential", "mobile"];
const MINUTE = 60_000;
const today = () => new Date().toISOString().slice(0, 10);
let labels = 0;
const label = () => `walk-${++labels}-${crypto.randomUUID().slice(0, 6)}`;

async function created(response: Response, what: string): Promise<Record<string, any>> {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${await response.text()}`);
  return json(response);
}

async function scopedKeys(world: string, token: string, make: (products: Product[]) => Promise<string>) {
  const area = async (scopes: KeyScopes) =>
    (await created(await call("POST", "/v1/api-keys", { token, body: { name: label(), scopes } }), "key")).token;
  const walkers: Walker[] = [
    {
      name: `${world} residential-only key`,
      token: await make(["residential"]),
      products: ["residential"],
      scopes: null,
    },
    { name: `${world} ISP-only key`, token: await make(["isp"]), products: ["isp"], scopes: null },
    {
      name: `${world} traffic:read key`,
      token: await area({ traffic: "read" }),
      products: null,
      scopes: { traffic: "read" },
    },
    {
      name: `${world} subusers:read key`,
      token: await area({ subusers: "read" }),
      products: null,
      scopes: { subusers: "read" },
    },
  ];
  return walkers;
}

async function buildWorlds() {
  const account = await roomyAccount();
  const stranger = await roomyAccount();
  const sandbox = await sandboxOf(account);
  // The ISP batches of both worlds (each with its ISP-only sub-user), provisioned by one cron run: minutes live,
  // seconds in the sandbox.
  const isp = await orderBatch(account, { quantity: 5 });
  const sandboxIsp = await orderBatch(sandbox, { quantity: 5 });
  await runCron(Date.now() + 10 * MINUTE);
  return {
    live: await liveWorld(account, isp),
    sandbox: await sandboxWorld(sandbox, sandboxIsp),
    liveWalkers: await scopedKeys(
      "live",
      account.token,
      async (products) => (await issueKey(account.id, products)).token,
    ),
    sandboxWalkers: await scopedKeys(
      "sandbox",
      sandbox.token,
      async (products) => (await sandboxOf(account, products)).token,
    ),
    stranger: stranger.token,
  };
}

/** A budget amount no other figure of the world has: its audit entries name it in minor units. */
const BUDGET_USD = 98_765.43;

async function liveWorld(account: TestAccount, isp: TestBatch): Promise<World> {
  const token = account.token;
  const post = async (path: string, body?: unknown) =>
    created(await call("POST", `/v1${path}`, { token, body }), `POST ${path}`);
  const live: Resource[] = [];
  const add = (kind: string | null, owner: Owner, id: string, open = false) => {
    if (!live.some((resource) => resource.id === id)) live.push({ kind, owner, id, open });
  };

  // Sub-users and orders of each product.
  const resOrder = await post("/orders", { product: "residential", gb: 5 });
  const mobOrder = await post("/orders", { product: "mobile", gb: 5 });
  const resSub = await createSubuser(account, { products: ["residential"] });
  const mobSub = await createSubuser(account, { products: ["mobile"] });
  const ips = await batchIps(account, isp.batchId);
  if (ips.length !== 5) throw new Error(`the ISP batch was not provisioned: ${ips.length} IPs`);

  for (const [sub, owner] of [
    [resSub, "residential"],
    [mobSub, "mobile"],
    [isp.subuser, "isp"],
  ] as const) {
    add("sub", owner, sub.id);
    add(null, owner, sub.name);
  }
  add("ord", "isp", isp.orderId);
  add("ord", "residential", resOrder.id);
  add("ord", "mobile", mobOrder.id);
  add("bat", "isp", isp.batchId);
  for (const ip of ips) add("ip", "isp", ip.ip_id);

  // Sessions (before any whitelist: the gateway is asked with the sub-user's password).
  add("ses", "residential", await startSession(account, resSub, "residential"));
  add("ses", "mobile", await startSession(account, mobSub, "mobile"));

  add("sbn", "isp", (await post("/subscriptions", { product: "isp", batch_id: isp.batchId, cycle: "monthly" })).id);
  add(
    "sbn",
    "residential",
    (await post("/subscriptions", { product: "residential", plan: "starter", cycle: "monthly" })).id,
  );
  for (const [sub, owner, ip] of [
    [resSub, "residential", "203.0.113.0/24"],
    [mobSub, "mobile", "203.0.113.1"],
    [isp.subuser, "isp", "203.0.113.2"],
  ] as const) {
    add("wl", owner, (await post("/whitelists", { subuser: sub.id, product: owner, ip })).id);
  }
  add("bwl", "isp", (await post(`/isp/batches/${isp.batchId}/whitelist`, { ip: "203.0.113.9" })).id);

  // Traffic of each product: the request log's entries name their request ids.
  const traffic = () => [
    usageRecord(username(resSub.name), { product: "residential" }),
    usageRecord(username(mobSub.name, "type-mob-region-us"), { product: "mobile" }),
    usageRecord(`user_${isp.subuser.name}`, { product: "isp", dest_ip: ips[0]?.ip }),
  ];
  const records = traffic();
  const usage = await reportUsage(records);
  if (usage.status !== 202) throw new Error(`usage: ${usage.status} ${await usage.text()}`);
  for (const record of records) {
    const product = record.product as Product;
    add(null, product, record.request_id as string);
    await eventually(
      async () => (await call("GET", `/v1/${product}/requests`, { token })).text(),
      (text) => text.includes(record.request_id as string),
    );
  }

  // Traffic spike episodes, recorded as a store's alerts are.
  const alerts = [spikeAlert(resSub.id), spikeAlert(mobSub.id), spikeAlert(isp.subuser.id)];
  const store = { confirmSpikeAlerts: async () => {}, configureSpikes: async () => {} };
  await announceTrafficSpikes(domainContext(env), account.id, alerts, store as never);
  add("spk", "residential", alerts[0]!.spikeId);
  add("spk", "mobile", alerts[1]!.spikeId);
  add("spk", "isp", alerts[2]!.spikeId);
  // Their notification, one for the account: every product's episodes name it.
  const listed = await call("GET", "/v1/traffic-spikes", { token });
  for (const spike of (await listed.json<{ data: Array<{ digest: string }> }>()).data) {
    add("spd", "account", spike.digest, true);
  }

  // Proxy tests (bandwidth products only: the username grammar has no ISP type).
  for (const [sub, owner, type] of [
    [resSub, "residential", "res"],
    [mobSub, "mobile", "mob"],
  ] as const) {
    const run = await post("/tools/proxy-test", {
      username: username(sub.name, `type-${type}-region-us`),
      password: "any",
    });
    add("pxt", owner, run.id);
  }

  // What only a key without a product scope may read: reports, the budget, webhooks and events.
  const report = await post("/reports", {
    name: label(),
    type: "traffic",
    filters: { subusers: [resSub.id, mobSub.id, isp.subuser.id] },
    format: "csv",
    destination: { type: "email", email: "ops@example.com" },
  });
  add("rep", "account", report.id);
  const run = (await post(`/reports/${report.id}/run`, { from: today(), to: today() })).run_id;
  add("run", "account", run);
  await eventually(
    async () => (await json(await call("GET", `/v1/reports/runs/${run}`, { token }))).status,
    (status) => status === "completed" || status === "failed",
  );
  const budget = { amount_usd: BUDGET_USD, thresholds_percent: [50], hard_stop: false };
  await created(await call("PUT", "/v1/budget", { token, body: budget }), "budget");
  add(null, "account", String(Math.round(BUDGET_USD * 100)));
  const endpoint = await post("/webhook-endpoints", {
    url: "https://hooks.example.com/walk",
    events: ["order.completed"],
  });
  add("whe", "account", endpoint.id);
  const delivery = await post(`/webhook-endpoints/${endpoint.id}/test`);
  add("whd", "account", delivery.id);
  add("evt", "account", delivery.event_id);
  for (const event of (await created(await call("GET", "/v1/events", { token }), "events")).data) {
    add("evt", "account", event.id);
  }

  // Keys to be read or managed (never the walkers themselves).
  for (const product of PRODUCTS) add("key", product, (await issueKey(account.id, [product])).id, true);
  // The account's people and an invitation (of no product, like keys); session, OAuth grant and passkey ids are a signed-in
  // member's own.
  const member = await created(
    await admin("POST", `/accounts/${account.id}/members`, { email: `${label()}@example.com`, name: "Walker" }),
    "member",
  );
  add("mem", "account", member.id, true);
  add("inv", "account", (await post("/invitations", { email: `${label()}@example.com`, role: "viewer" })).id, true);
  add("msn", "account", "msn_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", true);
  add("oag", "account", "oag_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", true);
  add("pky", "account", "pky_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", true);

  const names = Object.fromEntries([resSub, mobSub, isp.subuser].map((subuser) => [subuser.id, subuser.name]));
  return { name: "live", token, resources: live, names, traffic, accountId: account.id };
}

/** The sandbox's resources that its test helpers act on. */
async function sandboxWorld(sandbox: TestAccount, isp: TestBatch): Promise<World> {
  const subscribe = async (body: unknown) =>
    (await created(await call("POST", "/v1/subscriptions", { token: sandbox.token, body }), "subscription")).id;
  const residential = await createSubuser(sandbox, { products: ["residential"] });
  const mobile = await createSubuser(sandbox, { products: ["mobile"] });
  const resources: Resource[] = [
    { kind: "sub", owner: "residential", id: residential.id },
    { kind: "sub", owner: "mobile", id: mobile.id },
    { kind: "sub", owner: "isp", id: isp.subuser.id },
    { kind: "bat", owner: "isp", id: isp.batchId },
    { kind: "sbn", owner: "isp", id: await subscribe({ product: "isp", batch_id: isp.batchId, cycle: "monthly" }) },
    {
      kind: "sbn",
      owner: "residential",
      id: await subscribe({ product: "residential", plan: "starter", cycle: "monthly" }),
    },
  ];
  const names = Object.fromEntries([residential, mobile, isp.subuser].map((subuser) => [subuser.id, subuser.name]));
  return { name: "sandbox", token: sandbox.token, resources, names, accountId: sandbox.id };
}

// ── Requests: each operation's parameters and body, filled from the world ───────────────────────────

/** The variant of a request that names only what the walker's product scope covers. */
const INSIDE = -1;

/**
 * What a request names, as the walker sees it: for a product-scoped walker, a resource (or product) outside its
 * scope wherever the world has one of the kind asked (the `variant`-th of them: each variant names the next), else
 * one inside it; for any other walker, or the `INSIDE` variant, one inside its scope (of the product its path names,
 * if it names one).
 */
class Choice {
  /** The request names a resource or product outside the walker's product scope. */
  referred = false;
  /** The request names a product outside the walker's product scope. */
  productReferred = false;
  /** The most resources (or products) outside the walker's scope that one of its choices had: the variants needed. */
  variants = 1;
  /** False when the `INSIDE` variant cannot be made: the world has nothing of a kind inside the walker's scope. */
  possible = true;

  private readonly world: World;
  private readonly walker: Walker | null;
  private readonly variant: number;
  private readonly near: Owner | undefined;

  constructor(world: World, walker: Walker | null, variant = 0, near?: Owner) {
    this.world = world;
    this.walker = walker;
    this.variant = variant;
    this.near = near;
  }

  covers(owner: Owner): boolean {
    const scope = this.walker?.products ?? null;
    return scope === null || (owner !== "account" && scope.includes(owner));
  }

  pick(kind: string, owners?: readonly Owner[]): Resource {
    const candidates = this.world.resources.filter(
      (resource) => resource.kind === kind && (owners === undefined || owners.includes(resource.owner)),
    );
    if (candidates.length === 0) throw new Error(`the ${this.world.name} world has no ${kind}: add one for the walk`);
    const outside = this.outside(candidates, (resource) => resource.owner);
    if (outside && !outside.open) this.referred = true;
    const near = candidates.filter((resource) => resource.owner === this.near);
    return outside ?? this.inside([...near, ...candidates], (resource) => resource.owner);
  }

  product(choices: readonly Product[]): Product {
    const outside = this.outside(choices, (product) => product);
    if (outside) {
      this.referred = true;
      this.productReferred = true;
    }
    return outside ?? this.inside(choices, (product) => product);
  }

  private outside<T>(choices: readonly T[], ownerOf: (choice: T) => Owner): T | undefined {
    if (this.variant === INSIDE) return undefined;
    const outside = choices.filter((choice) => !this.covers(ownerOf(choice)));
    this.variants = Math.max(this.variants, outside.length);
    return outside[Math.min(this.variant, outside.length - 1)];
  }

  private inside<T>(choices: readonly T[], ownerOf: (choice: T) => Owner): T {
    const inside = choices.find((choice) => this.covers(ownerOf(choice)));
    if (inside === undefined) this.possible = false;
    return inside ?? (choices[0] as T);
  }

  gatewayName(subuserId: string): string {
    const name = this.world.names[subuserId];
    if (!name) throw new Error(`the ${this.world.name} world has no gateway name for ${subuserId}`);
    return name;
  }
}

/**
 * Bodies the document's examples cannot give (a product to choose, a name to make unique, a sub-user's gateway
 * name) or should not (a hard stop that would refuse later charges). Any other body is the operation's example,
 * its ids replaced by the world's.
 */
const BODIES: Record<string, (choice: Choice) => unknown> = {
  createSubuser: (c) => ({ label: label(), products: [c.product(PRODUCTS)] }),
  updateSubuser: () => ({ alert_on_new_source: true }),
  createWhitelistEntry: (c) => {
    const subuser = c.pick("sub");
    return { subuser: subuser.id, product: subuser.owner, ip: "198.51.100.0/24" };
  },
  addIspBatchWhitelistEntry: () => ({ ip: "198.51.100.7" }),
  createOrder: (c) => orderBody(c),
  quoteOrder: (c) => orderBody(c),
  createSubscription: (c) => {
    const product = c.product(PRODUCTS);
    return product === "isp"
      ? { product, batch_id: c.pick("bat").id, cycle: "monthly" }
      : { product, plan: "pro", cycle: "monthly" };
  },
  runProxyTest: (c) => {
    const product = c.product(BANDWIDTH);
    const subuser = c.pick("sub", [product]);
    const type = product === "mobile" ? "mob" : "res";
    return { username: username(c.gatewayName(subuser.id), `type-${type}-region-us`), password: "any" };
  },
  generateTestTraffic: (c) => ({ subuser: c.pick("sub", BANDWIDTH).id, requests: 5 }),
  startTestSession: (c) => ({ subuser: c.pick("sub", BANDWIDTH).id, region: "us", session_id: "walk2", sesstime: 10 }),
  createReport: (c) => ({
    name: label(),
    type: "traffic",
    filters: { products: [c.product(PRODUCTS)], subusers: [c.pick("sub").id] },
    format: "csv",
    destination: { type: "email", email: "ops@example.com" },
  }),
  runReport: () => ({ from: today(), to: today() }),
  createApiKey: (c) => ({ name: label(), products: [c.product(PRODUCTS)] }),
  updateApiKey: () => ({ name: label() }),
  rotateApiKey: () => ({ grace_seconds: 0 }),
  setBudget: () => ({ amount_usd: 100_000, thresholds_percent: [80], hard_stop: false }),
  createWebhookEndpoint: () => ({ url: "https://hooks.example.com/walk-2", events: ["order.completed"] }),
};

function orderBody(c: Choice) {
  const product = c.product(PRODUCTS);
  if (product !== "isp") return { product, gb: 1 };
  return {
    product,
    country: "US",
    city: "newyork",
    asn: 7922,
    quantity: 5,
    months: 1,
    subuser: c.pick("sub", ["isp"]).id,
  };
}

/** Headers an operation needs to get past its protocol: the live tail is a WebSocket upgrade. */
const HEADERS: Record<string, Record<string, string>> = { tailRequests: { Upgrade: "websocket" } };

const ID = /^([a-z]+)_[0-9A-Za-z]+$/;

function withWorldIds(value: unknown, choice: Choice): unknown {
  if (typeof value === "string") {
    const prefix = ID.exec(value)?.[1];
    return prefix ? choice.pick(prefix).id : value;
  }
  if (Array.isArray(value)) return value.map((item) => withWorldIds(item, choice));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withWorldIds(item, choice)]));
  }
  return value;
}

function kindOf(op: Operation, parameter: Parameter | undefined): string {
  const prefix = ID.exec(String(parameter?.schema?.example ?? ""))?.[1];
  if (!prefix) throw new Error(`${op.id}: no id kind for the parameter ${parameter?.name}: add it to the walk`);
  return prefix === "wl" && op.path.includes("/isp/batches/") ? "bwl" : prefix;
}

function queryValue(op: Operation, parameter: Parameter, choice: Choice): string {
  if (parameter.name === "from") return new Date(Date.now() - 60 * MINUTE).toISOString();
  if (parameter.name === "to") return new Date(Date.now() + MINUTE).toISOString();
  const example = parameter.schema?.example;
  const prefix = ID.exec(String(example ?? ""))?.[1];
  if (prefix) return choice.pick(prefix).id;
  if (example === undefined) throw new Error(`${op.id}: no value for the required ?${parameter.name}`);
  return String(example);
}

interface WalkRequest {
  op: Operation;
  method: string;
  url: string;
  body?: unknown;
  headers: Record<string, string>;
  /** Names an out-of-scope resource in its path, its required query or its body (not a mere filter). */
  direct: boolean;
  /** Names a product outside the walker's scope: refused for that alone, before any id in it is looked up. */
  byProduct: boolean;
}

/** The operation's request as the walker would make it; for a read, also one per optional id filter. */
function requestsFor(op: Operation, world: World, walker: Walker | null): WalkRequest[] {
  const [first, choice] = requestOf(op, world, walker, 0);
  const requests = [first];
  for (let variant = 1; variant < choice.variants; variant++) requests.push(requestOf(op, world, walker, variant)[0]);
  if (op.method !== "get" || walker?.products == null) return requests;
  // A read is made of what the walker's scope covers too (its answer must hold nothing beyond), and filtered by
  // what the scope does not cover.
  const [inside, within] = requestOf(op, world, walker, INSIDE);
  const base = within.possible ? inside : first;
  if (within.possible && !requests.some((request) => request.url === inside.url)) requests.push(inside);
  for (const parameter of op.parameters.filter((p) => p.in === "query" && !p.required)) {
    const prefix = ID.exec(String(parameter.schema?.example ?? ""))?.[1];
    if (!prefix) continue;
    const filter = new Choice(world, walker);
    const value = filter.pick(prefix).id;
    if (!filter.referred) continue;
    const url = new URL(base.url, "https://walk.test");
    url.searchParams.set(parameter.name, value);
    requests.push({ ...base, url: `${url.pathname}${url.search}` });
  }
  return requests;
}

/** One request of the operation: its path, required query and body, as the walker's `variant` names them. */
function requestOf(op: Operation, world: World, walker: Walker | null, variant: number): [WalkRequest, Choice] {
  const near = PRODUCTS.find((product) => op.path.split("/").includes(product));
  const choice = new Choice(world, walker, variant, near);
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = op.parameters.find((p) => p.in === "path" && p.name === name);
    const values = parameter?.schema?.enum;
    return values ? choice.product(values as Product[]) : choice.pick(kindOf(op, parameter)).id;
  });
  const query = new URLSearchParams();
  for (const parameter of op.parameters.filter((p) => p.in === "query" && p.required)) {
    query.set(parameter.name, queryValue(op, parameter, choice));
  }
  let body: unknown;
  if (op.hasBody) {
    const make = BODIES[op.id];
    if (!make && op.example === undefined) throw new Error(`${op.id}: no body for the walk: add one to BODIES`);
    body = make ? make(choice) : withWorldIds(op.example, choice);
  }
  const url = query.size > 0 ? `${path}?${query}` : path;
  const headers = HEADERS[op.id] ?? {};
  const named = { direct: choice.referred, byProduct: choice.productReferred };
  return [{ op, method: op.method, url, body, headers, ...named }, choice];
}

// ── Calls and verdicts ──────────────────────────────────────────────────────────────────────────────

interface Answer {
  status: number;
  code: string | undefined;
  text: string;
  /** A live tail that opened: its frames as received, until it is closed. */
  tail?: { socket: WebSocket; frames: string[] };
}

async function send(request: WalkRequest, token: string): Promise<Answer> {
  const response = await call(request.method.toUpperCase(), request.url, {
    token,
    body: request.body,
    headers: request.headers,
  });
  let tail: Answer["tail"];
  if (response.webSocket) {
    const opened = { socket: response.webSocket, frames: [] as string[] };
    opened.socket.accept();
    opened.socket.addEventListener("message", (event) => {
      opened.frames.push(String(event.data));
    });
    tail = opened;
  }
  const text = response.status === 101 ? "" : await response.text();
  let code: string | undefined;
  try {
    code = JSON.parse(text)?.code;
  } catch {
    code = undefined;
  }
  return { status: response.status, code, text, tail };
}

/** Closes a tail the walk opened. */
function closed(answer: Answer): Answer {
  answer.tail?.socket.close(1000, "walked");
  return answer;
}

const isSuccess = (status: number) => status >= 100 && status < 300;

/** What a product-scoped walker may not be shown: every resource whose owner its scope does not cover. */
function hiddenFrom(world: World, walker: Walker): string[] {
  const choice = new Choice(world, walker);
  return world.resources.filter((r) => !r.open && !choice.covers(r.owner)).map((r) => r.id);
}

/** 403 codes other than `subuser_scope_mismatch` that refuse a product-scoped key, by operation. */
const PRODUCT_REFUSALS: Record<string, string> = {
  // A key cannot make a key of products beyond its own (api-keys: "never grants more than the calling key").
  createApiKey: "insufficient_scope",
};

/** Operations that answer an out-of-scope request 200 with the refusal inside (as documented), and nothing of it. */
const REFUSED_IN_BODY: Record<string, (body: any) => boolean> = {
  // A quote reports the error the order would get; a product outside the key's scope is not priced.
  quoteOrder: (quote) =>
    quote.error?.code === "subuser_scope_mismatch" && quote.total_usd === null && quote.line_items.length === 0,
};

function describeCall(walker: Walker, request: WalkRequest): string {
  return `${walker.name}: ${request.op.id} ${request.method.toUpperCase()} ${request.url}`;
}

/** (a) A product-scoped walker's answer: no out-of-scope data, and a direct call on it refused. */
function judgeProductScope(world: World, walker: Walker, request: WalkRequest, answer: Answer): string | null {
  const where = `${describeCall(walker, request)} → ${answer.status} ${answer.code ?? ""}`;
  const liveSandboxHelper = request.op.sandboxOnly && world.name === "live";
  if (liveSandboxHelper) {
    return answer.status === 403 && answer.code === "sandbox_key_required" ? null : `${where}: a live key is refused`;
  }
  // Sign-in and its kin need no credential by design (they are how one is got): nothing to refuse.
  if (request.op.open) return null;
  if (request.op.scope === undefined) return isSuccess(answer.status) ? `${where}: opened without its link` : null;
  if (answer.status >= 500) return `${where}: a server error`;
  const asked = `${request.url} ${JSON.stringify(request.body ?? null)}`;
  const shown = hiddenFrom(world, walker).filter(
    (text) => answer.text.includes(text) && (isSuccess(answer.status) || !asked.includes(text)),
  );
  if (shown.length > 0) return `${where}: shows out-of-scope ${shown.join(", ")}`;
  if (!request.direct) return null;
  const refusal = PRODUCT_REFUSALS[request.op.id] ?? "subuser_scope_mismatch";
  const inBody = REFUSED_IN_BODY[request.op.id];
  const refused =
    (answer.status === 403 && answer.code === refusal) ||
    (answer.status === 404 && request.op.statuses.includes("404")) ||
    (answer.status === 200 && inBody !== undefined && inBody(JSON.parse(answer.text)));
  return refused ? null : `${where}: an out-of-scope resource must be refused (403 ${refusal} or a documented 404)`;
}

function allTexts(world: World): string[] {
  return world.resources.map((resource) => resource.id);
}

/** (b) An area-scoped walker's answer: refused before anything when it lacks the operation's scope. */
function judgeAreaScope(world: World, walker: Walker, request: WalkRequest, answer: Answer): string | null {
  const where = `${describeCall(walker, request)} → ${answer.status} ${answer.code ?? ""}`;
  if (request.op.sandboxOnly && world.name === "live") {
    return answer.status === 403 && answer.code === "sandbox_key_required" ? null : `${where}: a live key is refused`;
  }
  const required = request.op.scope;
  if (request.op.open) return null;
  if (required === undefined) return isSuccess(answer.status) ? `${where}: opened without its link` : null;
  if (answer.status >= 500) return `${where}: a server error`;
  if (required === ANY_KEY_SCOPE) return isSuccess(answer.status) ? null : `${where}: open to any key`;
  const [area, access] = required.split(":") as [KeyArea, KeyAccess];
  if (scopeAllows(walker.scopes, area, access)) {
    return answer.status === 403 && answer.code === "insufficient_scope" ? `${where}: refused a scope it has` : null;
  }
  if (answer.status !== 403 || answer.code !== "insufficient_scope") return `${where}: needs ${required}`;
  const shown = allTexts(world).filter((text) => answer.text.includes(text));
  return shown.length > 0 ? `${where}: the refusal shows ${shown.join(", ")}` : null;
}

function judge(world: World, walker: Walker, request: WalkRequest, answer: Answer): string | null {
  return walker.products === null
    ? judgeAreaScope(world, walker, request, answer)
    : judgeProductScope(world, walker, request, answer);
}

// ── The walk ────────────────────────────────────────────────────────────────────────────────────────

let operations: Operation[];
let worlds: Awaited<ReturnType<typeof buildWorlds>>;

beforeAll(async () => {
  operations = await publicOperations();
  worlds = await buildWorlds();
}, 60_000);

/** The operations a world walks: the sandbox's own helpers in the sandbox, everything in the live world. */
function walked(world: World): Operation[] {
  return world.name === "sandbox" ? operations.filter((op) => op.sandboxOnly) : operations;
}

/** (a) calls every read and every write that names something outside the walker's scope. */
async function walkProducts(world: World, walkers: Walker[]): Promise<string[]> {
  const problems: string[] = [];
  const tails: OpenTail[] = [];
  for (const walker of walkers.filter((w) => w.products !== null)) {
    for (const op of walked(world)) {
      for (const request of requestsFor(op, world, walker)) {
        if (op.method !== "get" && !request.direct) continue;
        const answer = await send(request, walker.token);
        const problem = judge(world, walker, request, answer) ?? (await scopeFirst(world, walker, request, answer));
        if (problem) problems.push(problem);
        if (answer.tail) tails.push({ walker, request, tail: answer.tail });
      }
    }
  }
  return [...problems, ...(await watchTails(world, tails))];
}

/**
 * Scope before reading: a request refused for the product it names, or for the key's area scopes, is refused the
 * same way with its ids swapped for ids never issued (a lookup first would answer 404, telling which ids exist).
 */
async function scopeFirst(world: World, walker: Walker, request: WalkRequest, answer: Answer): Promise<string | null> {
  if (!request.byProduct && answer.code !== "insufficient_scope") return null;
  const missing = closed(await send(withoutWorldIds(world, request), walker.token));
  const refusal = (seen: Answer) => `${seen.status} ${seen.code ?? JSON.parse(seen.text || "{}").error?.code}`;
  if (refusal(missing) === refusal(answer)) return null;
  return `${describeCall(walker, request)}: ${refusal(answer)}, but ${refusal(missing)} with ids never issued`;
}

function withoutWorldIds(world: World, request: WalkRequest): WalkRequest {
  const body = request.body === undefined ? undefined : JSON.parse(withMissingIds(world, JSON.stringify(request.body)));
  return { ...request, url: withMissingIds(world, request.url), body };
}

interface OpenTail {
  walker: Walker;
  request: WalkRequest;
  tail: NonNullable<Answer["tail"]>;
}

/**
 * The live tails the walk opened, watched while every product's traffic arrives: each shows only its walker's
 * products (an unfiltered one receives them, so the watch is not idle).
 */
async function watchTails(world: World, tails: OpenTail[]): Promise<string[]> {
  if (tails.length === 0) return [];
  const records = world.traffic?.() ?? [];
  for (const record of records) {
    world.resources.push({ kind: null, owner: record.product as Product, id: record.request_id as string });
  }
  const usage = await reportUsage(records);
  if (usage.status !== 202) return [`tail traffic: ${usage.status}`];
  const requests = (frames: string[]) => frames.filter((frame) => JSON.parse(frame).type === "request").length;
  const unfiltered = tails.filter(({ request }) => !request.url.includes("?"));
  await eventually(
    async () => unfiltered.every(({ tail }) => requests(tail.frames) > 0),
    (all) => all,
  ).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const problems: string[] = [];
  for (const { walker, request, tail } of tails) {
    tail.socket.close(1000, "walked");
    const text = tail.frames.join("\n");
    const shown = hiddenFrom(world, walker).filter((hidden) => text.includes(hidden));
    if (shown.length > 0) problems.push(`${describeCall(walker, request)}: the tail shows out-of-scope ${shown}`);
    if (unfiltered.some((open) => open.tail === tail) && requests(tail.frames) === 0) {
      problems.push(`${describeCall(walker, request)}: the tail received none of its products' traffic`);
    }
  }
  // The traffic fully applied and settled before anything else reads the world.
  for (const record of records) {
    await eventually(
      async () => (await call("GET", `/v1/${record.product}/requests`, { token: world.token })).text(),
      (text) => text.includes(record.request_id as string),
    );
  }
  await settleUsage({ id: world.accountId });
  return problems;
}

async function walkAreas(world: World, walkers: Walker[]): Promise<string[]> {
  const problems: string[] = [];
  for (const walker of walkers.filter((w) => w.products === null)) {
    for (const op of walked(world)) {
      const [request] = requestsFor(op, world, walker);
      const answer = closed(await send(request!, walker.token));
      const problem = judge(world, walker, request!, answer) ?? (await scopeFirst(world, walker, request!, answer));
      if (problem) problems.push(problem);
    }
  }
  return problems;
}

/** Everything the account's full key reads (each read of the document, once), to compare before and after a walk. */
async function readings(world: World): Promise<Record<string, string>> {
  const seen: Record<string, string> = {};
  for (const op of walked(world)) {
    const read = op.method === "get" && op.scope !== undefined && op.scope !== ANY_KEY_SCOPE && !op.sandboxOnly;
    if (!read || op.id in HEADERS) continue; // A stream (the live tail) is no reading.
    const [request] = requestsFor(op, world, null);
    const answer = closed(await send(request!, world.token));
    seen[request!.url.replace(/([?&])(from|to)=[^&]*/g, "$1$2")] = `${answer.status} ${normalized(answer.text)}`;
  }
  return seen;
}

/**
 * A reading without what changes by the clock or by reading it: keys' last use, fresh links, a pool's forecast, and
 * the range a reading of the last hour echoes (it moves with the minute the reading falls in).
 */
function normalized(text: string): string {
  return text
    .replace(/"last_used_(at|ip)":("[^"]*"|null)/g, "")
    .replace(/^\{"from":"[^"]*","to":"[^"]*"/, '{"from":"","to":""')
    .replace(/"download_(url|expires_at)":"[^"]*"/g, "")
    .replace(/"forecast":\{[^}]*\}/g, "");
}

/** A write on an existing resource (a path id) or on the account's own settings (PUT, PATCH, DELETE). */
function retriable(op: Operation): boolean {
  return op.method !== "get" && (op.method !== "post" || op.path.includes("{"));
}

/**
 * Each write applied by the account's full key, then tried by each narrower walker on the same resource (deletes
 * last, so that the other writes find their resources). Answers the problems and the full key's statuses.
 */
async function walkRetries(world: World, walkers: Walker[]) {
  const problems: string[] = [];
  const applied = new Map<string, number[]>();
  const done = new Set<string>();
  // The document lists a resource before what belongs to it: deletes in reverse, a whitelist entry before its sub-user.
  const ops = walked(world).filter(retriable);
  const writes = [
    ...ops.filter((op) => op.method !== "delete"),
    ...ops.filter((op) => op.method === "delete").reverse(),
  ];
  for (const op of writes) {
    for (const walker of walkers) {
      for (const request of requestsFor(op, world, walker)) {
        if (walker.products !== null && !request.direct) continue;
        const key = `${request.method} ${request.url} ${JSON.stringify(request.body ?? null)}`;
        if (!done.has(key)) {
          done.add(key);
          applied.set(op.id, [...(applied.get(op.id) ?? []), closed(await send(request, world.token)).status]);
        }
        const problem = judge(world, walker, request, closed(await send(request, walker.token)));
        if (problem) problems.push(`retry after the full key: ${problem}`);
      }
    }
  }
  return { problems, applied };
}

/** The same text with every id (or gateway name) of the world it holds swapped for a well-formed one never issued. */
function withMissingIds(world: World, text: string): string {
  let swapped = text;
  for (const { id } of world.resources) {
    const keep = ID.test(id) ? id.indexOf("_") + 1 : 1;
    swapped = swapped.replaceAll(id, `${id.slice(0, keep)}${"0".repeat(id.length - keep)}`);
  }
  return swapped;
}

describe("the scope walk: every operation of the document, by narrower keys", () => {
  it("(a) a key of another product is never shown another product's resources, and a direct read or write of one is 403 subuser_scope_mismatch (or a documented 404), never 2xx or 5xx", async () => {
    const problems = [
      ...(await walkProducts(worlds.live, worlds.liveWalkers)),
      ...(await walkProducts(worlds.sandbox, worlds.sandboxWalkers)),
    ];
    expect(problems).toEqual([]);
  }, 60_000);

  it("(b) a key without an operation's area scope is refused 403 insufficient_scope before anything: no data in the answer, nothing changed", async () => {
    const before = await readings(worlds.live);
    const problems = [
      ...(await walkAreas(worlds.live, worlds.liveWalkers)),
      ...(await walkAreas(worlds.sandbox, worlds.sandboxWalkers)),
    ];
    expect(problems).toEqual([]);
    const after = await readings(worlds.live);
    // Only the readings that moved, so a failure names them.
    const moved = Object.keys(before).filter((url) => after[url] !== before[url]);
    expect(moved.map((url) => ({ url, before: before[url], after: after[url] }))).toEqual([]);
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
  }, 60_000);

  it("another account's ids answer exactly like ids never issued, for every operation that takes one", async () => {
    const problems: string[] = [];
    let compared = 0;
    for (const op of operations.filter((op) => !op.sandboxOnly && op.scope !== undefined)) {
      const [request] = requestsFor(op, worlds.live, null);
      const asked = `${request!.url} ${JSON.stringify(request!.body ?? null)}`;
      if (withMissingIds(worlds.live, asked) === asked) continue;
      const missing = withoutWorldIds(worlds.live, request!);
      const foreign = closed(await send(request!, worlds.stranger));
      const absent = closed(await send(missing, worlds.stranger));
      // The error, or a quote's (a quote reports the order's error in a 200).
      const seen = (answer: Answer, text: string) => {
        const body = JSON.parse(text || "{}");
        const error = body.code ? body : (body.error ?? {});
        return { status: answer.status, code: error.code, message: error.message };
      };
      compared++;
      const theirs = seen(foreign, withMissingIds(worlds.live, foreign.text));
      const never = seen(absent, absent.text);
      if (JSON.stringify(theirs) !== JSON.stringify(never)) {
        problems.push(`${op.id} ${request!.url}: ${JSON.stringify(theirs)} ≠ missing ${JSON.stringify(never)}`);
      }
    }
    expect(problems).toEqual([]);
    expect(compared).toBeGreaterThan(40);
  }, 60_000);
  it("retries of an applied write (an acknowledged episode, a cancelled subscription, a deleted resource) still refuse a narrower key: 403 or 404, never 200 with data", async () => {
    const live = await walkRetries(worlds.live, worlds.liveWalkers);
    const sandbox = await walkRetries(worlds.sandbox, worlds.sandboxWalkers);
    expect([...live.problems, ...sandbox.problems]).toEqual([]);
    // The retries met the applied state: the full key's own calls went through.
    const succeeded = (statuses: number[] | undefined) => (statuses ?? []).some(isSuccess);
    for (const id of ["acknowledgeTrafficSpike", "cancelSubscription", "deleteSubuser", "deleteWhitelistEntry"]) {
      expect(succeeded(live.applied.get(id)), id).toBe(true);
    }
    for (const id of ["releaseIspBatch", "removeIspBatchWhitelistEntry", "terminateResidentialSession"]) {
      expect(succeeded(live.applied.get(id)), id).toBe(true);
    }
    expect(succeeded(sandbox.applied.get("renewTestSubscription")), "renewTestSubscription").toBe(true);
  }, 60_000);
});

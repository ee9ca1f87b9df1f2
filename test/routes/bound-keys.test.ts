import { beforeAll, describe, expect, it } from "vitest";
import { domainContext } from "../../src/domain/context";
import { announceTrafficSpikes } from "../../src/domain/subusers/traffic-spikes";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, env, json } from "../helpers/http";
import { type Operation, publicOperations } from "../helpers/operations";
import { createSubuser, type TestSubuser, username } from "../helpers/subusers";
import { eventually, reportUsage, settleUsage, usageRecord } from "../helpers/usage";
import { roomyAccount, spikeAlert, startSession } from "../helpers/walk-world";
import { callTool, connect } from "../mcp/client";

/**
 * Keys bound to sub-users (`subuser_ids`): such a key sees and acts on its sub-users alone.
 *
 * The walk: every operation of the public OpenAPI document (read at run time: a route added later is walked too),
 * called by a key bound to two sub-users of an account that has a third, with the ids of that other sub-user, of
 * another account's sub-user and of ids never issued in every path id, id filter and body id, and with no filter.
 * - No answer shows anything of the other sub-user or of the other account (id, gateway name, label, its sessions,
 *   episodes, whitelist entries, proxy tests, logged requests, the keys bound to it), except an error echoing the
 *   caller's own input.
 * - Another sub-user's id (and another account's) answers exactly like an id never issued: same status, code and
 *   message.
 * - An operation not open to bound keys (`x-bound-keys`) is 403 `subuser_binding`; one open to them answers its
 *   own sub-users' ids with success.
 */

// ── The world ───────────────────────────────────────────────────────────────────────────────────────

type Who = "mine" | "other" | "foreign" | "missing";

interface World {
  account: TestAccount;
  mine: TestSubuser;
  mineToo: TestSubuser;
  other: TestSubuser;
  foreign: TestSubuser;
  /** The key bound to `mine` and `mineToo`, with every scope. */
  bound: string;
  /** Per id kind (`sub`, `ses`, `spk`, `wl`, `pxt`, `key`), the id each party's variant names. */
  ids: Record<Who, Record<string, string>>;
  /** Gateway names, for the proxy test's username. */
  names: Record<Who, string>;
  /** What the bound key must never be shown. */
  hidden: string[];
}

const MISSING = (prefix: string) => `${prefix}_${"0".repeat(26)}`;
const KINDS = ["sub", "ses", "spk", "wl", "pxt", "key"];
let labels = 0;
const label = () => `bound-${++labels}-${crypto.randomUUID().slice(0, 6)}`;

async function ok(response: Response, what: string): Promise<Record<string, any>> {
  if (response.status >= 300) throw new Error(`${what}: ${response.status} ${await response.text()}`);
  return json(response);
}

async function makeKey(token: string, body: Record<string, unknown>): Promise<Record<string, any>> {
  return ok(await call("POST", "/v1/api-keys", { token, body: { name: label(), ...body } }), "key");
}

/** A sub-user's whitelist entry, spike episode, proxy test, session and key bound to it: its own resources. */
async function resourcesOf(account: TestAccount, subuser: TestSubuser, sessionId: string) {
  const post = (path: string, body: unknown) => call("POST", `/v1${path}`, { token: account.token, body });
  const wl = await ok(
    await post("/whitelists", { subuser: subuser.id, product: "residential", ip: "203.0.113.7" }),
    "wl",
  );
  const pxt = await ok(
    await post("/tools/proxy-test", { username: username(subuser.name, "type-res-region-us"), password: "any" }),
    "proxy test",
  );
  const alert = spikeAlert(subuser.id);
  const store = { confirmSpikeAlerts: async () => {}, configureSpikes: async () => {} };
  await announceTrafficSpikes(domainContext(env), account.id, [alert], store as never);
  const session = await startSession(account, subuser, "residential", sessionId);
  const key = await makeKey(account.token, { subuser_ids: [subuser.id] });
  return { sub: subuser.id, ses: session, spk: alert.spikeId, wl: wl.id, pxt: pxt.id, key: key.id };
}

async function buildWorld(): Promise<World> {
  const account = await roomyAccount({ bandwidthGb: 5 });
  const stranger = await createAccount({ plan: "enterprise" });
  const mine = await createSubuser(account, { label: label() });
  const mineToo = await createSubuser(account, { label: label() });
  const other = await createSubuser(account, { label: label() });
  const foreign = await createSubuser(stranger, { label: label() });
  const bound = (await makeKey(account.token, { subuser_ids: [mine.id, mineToo.id] })).token;
  const mineIds = await resourcesOf(account, mine, "mine1");
  const otherIds = await resourcesOf(account, other, "other1");
  const missing = Object.fromEntries(KINDS.map((kind) => [kind, MISSING(kind)]));
  // Traffic of each: the request log names the requests.
  const records = [mine, other].map((subuser) => usageRecord(username(subuser.name)));
  expect((await reportUsage(records)).status).toBe(202);
  await eventually(
    async () => (await call("GET", "/v1/residential/requests", { token: account.token })).text(),
    (text) => records.every((record) => text.includes(record.request_id as string)),
  );
  await settleUsage(account);
  return {
    account,
    mine,
    mineToo,
    other,
    foreign,
    bound,
    ids: { mine: mineIds, other: otherIds, foreign: { ...missing, sub: foreign.id }, missing },
    names: { mine: mine.name, other: other.name, foreign: foreign.name, missing: "s0000000000" },
    hidden: [
      ...Object.values(otherIds),
      other.name,
      other.label,
      foreign.id,
      foreign.name,
      foreign.label,
      records[1]?.request_id as string,
    ],
  };
}

// ── Requests ────────────────────────────────────────────────────────────────────────────────────────

interface WalkRequest {
  op: Operation;
  who: Who;
  url: string;
  body?: unknown;
  headers: Record<string, string>;
}

const ID = /^([a-z]+)_[0-9A-Za-z]+$/;
const prefixOf = (value: unknown) => ID.exec(String(value ?? ""))?.[1];

/** Bodies the examples cannot give: a name to make unique, a sub-user's gateway name, a body a bound key may send. */
const BODIES: Record<string, (world: World, who: Who) => unknown> = {
  createWhitelistEntry: (w, who) => ({ subuser: w.ids[who].sub, product: "residential", ip: "198.51.100.0/24" }),
  runProxyTest: (w, who) => ({ username: username(w.names[who], "type-res-region-us"), password: "any" }),
  createApiKey: (w, who) => ({ name: label(), subuser_ids: [w.ids[who].sub] }),
  updateApiKey: () => ({ name: label() }),
  rotateApiKey: () => ({ grace_seconds: 0 }),
  updateSubuser: () => ({}),
};

function withIds(value: unknown, ids: Record<string, string>): unknown {
  if (typeof value === "string") {
    const prefix = prefixOf(value);
    return prefix && ids[prefix] ? ids[prefix] : value;
  }
  if (Array.isArray(value)) return value.map((item) => withIds(item, ids));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withIds(item, ids)]));
  }
  return value;
}

function requestOf(op: Operation, world: World, who: Who, filter?: { name: string; who: Who }): WalkRequest {
  const ids = world.ids[who];
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = op.parameters.find((p) => p.in === "path" && p.name === name);
    const values = parameter?.schema?.enum;
    if (values) return values.includes("residential") ? "residential" : (values[0] as string);
    const example = String(parameter?.schema?.example ?? "");
    return (ids[prefixOf(example) ?? ""] ?? example) || MISSING("x");
  });
  const query = new URLSearchParams();
  for (const parameter of op.parameters.filter((p) => p.in === "query" && p.required)) {
    if (parameter.name === "from") query.set("from", new Date(Date.now() - 3_600_000).toISOString());
    else if (parameter.name === "to") query.set("to", new Date(Date.now() + 60_000).toISOString());
    else query.set(parameter.name, String(withIds(parameter.schema?.example, ids)));
  }
  if (filter) query.set(filter.name, world.ids[filter.who].sub as string);
  const make = BODIES[op.id];
  const body = op.hasBody ? (make ? make(world, who) : withIds(op.example ?? {}, ids)) : undefined;
  const url = query.size > 0 ? `${path}?${query}` : path;
  const headers: Record<string, string> = op.id === "tailRequests" ? { Upgrade: "websocket" } : {};
  return { op, who, url, body, headers };
}

/** The optional query parameters that name a sub-user (a filter): each is walked with every party's id. */
function subuserFilters(op: Operation): string[] {
  return op.parameters
    .filter((p) => p.in === "query" && !p.required && prefixOf(p.schema?.example) === "sub")
    .map((p) => p.name);
}

interface Answer {
  status: number;
  code?: string;
  message?: string;
  text: string;
}

async function send(request: WalkRequest, token: string): Promise<Answer> {
  const response = await call(request.op.method.toUpperCase(), request.url, {
    token,
    body: request.body,
    headers: request.headers,
  });
  if (response.webSocket) {
    response.webSocket.accept();
    response.webSocket.close(1000, "walked");
    return { status: response.status, text: "" };
  }
  const text = await response.text();
  const error = (() => {
    try {
      return JSON.parse(text);
    } catch {
      return {};
    }
  })();
  return { status: response.status, code: error.code, message: error.message, text };
}

/** The answer with the variant's ids in its message swapped for those never issued: comparable to the missing one. */
function asMissing(world: World, who: Who, answer: Answer) {
  let message = answer.message ?? "";
  for (const kind of KINDS) message = message.replaceAll(world.ids[who][kind] as string, MISSING(kind));
  message = message.replaceAll(world.names[who], world.names.missing);
  return { status: answer.status, code: answer.code, message };
}

// ── The walk ────────────────────────────────────────────────────────────────────────────────────────

let world: World;
let operations: Operation[];

beforeAll(async () => {
  operations = await publicOperations();
  world = await buildWorld();
}, 60_000);

const isSuccess = (status: number) => status >= 100 && status < 300;

describe("a key bound to sub-users, walked through every operation of the document", () => {
  it("never shows another sub-user's or account's data; their ids answer like ids never issued; what is closed to bound keys is 403 subuser_binding; its own sub-users' ids succeed", async () => {
    const problems: string[] = [];
    const walked = operations.filter((op) => op.scope !== undefined);
    // Writes that remove what others use go last.
    const ordered = [
      ...walked.filter((op) => op.method !== "delete"),
      ...walked.filter((op) => op.method === "delete"),
    ];
    let compared = 0;
    for (const op of ordered) {
      const where = (request: WalkRequest, answer: Answer) =>
        `${op.id} (${request.who}) ${op.method.toUpperCase()} ${request.url} → ${answer.status} ${answer.code ?? ""}`;
      const check = (request: WalkRequest, answer: Answer) => {
        if (answer.status >= 500) problems.push(`${where(request, answer)}: a server error`);
        const asked = `${request.url} ${JSON.stringify(request.body ?? null)}`;
        const shown = world.hidden.filter(
          (text) => answer.text.includes(text) && (isSuccess(answer.status) || !asked.includes(text)),
        );
        if (shown.length > 0) problems.push(`${where(request, answer)}: shows ${shown.join(", ")}`);
      };

      if (op.sandboxOnly || !op.boundKeys) {
        const request = requestOf(op, world, "other");
        const answer = await send(request, world.bound);
        check(request, answer);
        const refusal = op.sandboxOnly ? "sandbox_key_required" : "subuser_binding";
        if (answer.status !== 403 || answer.code !== refusal) problems.push(`${where(request, answer)}: ${refusal}`);
        continue;
      }

      // Another sub-user's and another account's ids, exactly as ids never issued (path, required query, body).
      const missing = await send(requestOf(op, world, "missing"), world.bound);
      for (const who of ["other", "foreign"] as const) {
        const request = requestOf(op, world, who);
        const answer = await send(request, world.bound);
        check(request, answer);
        const differs =
          JSON.stringify(asMissing(world, who, answer)) !== JSON.stringify(asMissing(world, "missing", missing));
        const named =
          request.url !== requestOf(op, world, "missing").url ||
          JSON.stringify(request.body) !== JSON.stringify(requestOf(op, world, "missing").body);
        if (named) {
          compared++;
          if (differs) problems.push(`${where(request, answer)}: ≠ never issued ${missing.status} ${missing.code}`);
        }
      }
      // Filters naming another sub-user or account, as one never issued; and no filter at all.
      for (const name of subuserFilters(op)) {
        const absent = await send(requestOf(op, world, "mine", { name, who: "missing" }), world.bound);
        for (const who of ["other", "foreign"] as const) {
          const request = requestOf(op, world, "mine", { name, who });
          const answer = await send(request, world.bound);
          check(request, answer);
          compared++;
          if (answer.status !== absent.status || answer.code !== absent.code) {
            problems.push(`${where(request, answer)}: filter ≠ never issued ${absent.status} ${absent.code}`);
          }
        }
      }
      // Its own sub-users' ids (and no filter): success, with nothing of the others.
      const request = requestOf(op, world, "mine");
      const answer = await send(request, world.bound);
      check(request, answer);
      // (Its session is residential: the mobile session operations answer it 404, as they would any key.)
      const otherProduct = op.path.includes("/mobile/") && op.path.includes("{");
      if (!isSuccess(answer.status) && !otherProduct) {
        problems.push(`${where(request, answer)}: its own sub-user's must succeed`);
      }
    }
    expect(problems).toEqual([]);
    expect(compared).toBeGreaterThan(20);
  }, 120_000);
});

// ── Rules of binding ────────────────────────────────────────────────────────────────────────────────

async function keyCall(token: string, method: string, path: string, body?: unknown) {
  const response = await call(method, `/v1${path}`, { token, body });
  return { status: response.status, body: await json(response) };
}

describe("binding a key to sub-users", () => {
  it("a key made with subuser_ids shows them (null when not bound), and its creation and change are audit-logged with them", async () => {
    const account = await createAccount();
    const [a, b] = [await createSubuser(account), await createSubuser(account)];
    const created = await keyCall(account.token, "POST", "/api-keys", { subuser_ids: [a.id, b.id, a.id] });
    expect(created.status).toBe(201);
    expect(created.body.subuser_ids).toEqual([a.id, b.id]);
    expect((await keyCall(account.token, "GET", `/api-keys/${created.body.id}`)).body.subuser_ids).toEqual([
      a.id,
      b.id,
    ]);
    expect((await keyCall(account.token, "GET", "/api-keys/current")).body.subuser_ids).toBeNull();
    const changed = await keyCall(account.token, "PATCH", `/api-keys/${created.body.id}`, { subuser_ids: [b.id] });
    expect(changed.body.subuser_ids).toEqual([b.id]);
    const entries = (await keyCall(account.token, "GET", `/audit-events?resource=${created.body.id}`)).body.data;
    expect(entries.map((entry: any) => entry.action)).toEqual(["api_key.updated", "api_key.created"]);
    expect(entries[0]).toMatchObject({ changes: { subuser_ids: [b.id] }, previous: { subuser_ids: [a.id, b.id] } });
    expect(entries[1].changes.subuser_ids).toEqual([a.id, b.id]);
    // Unbinding is a change like any other, by a key that is not bound itself.
    const unbound = await keyCall(account.token, "PATCH", `/api-keys/${created.body.id}`, { subuser_ids: null });
    expect(unbound.body.subuser_ids).toBeNull();
  });

  it("every id must be a live sub-user of the account within the calling key's product scope: unknown, deleted, another account's or outside the scope answer 404 subuser_not_found alike", async () => {
    const account = await createAccount();
    const stranger = await createAccount();
    const residential = await createSubuser(account, { products: ["residential"] });
    const mobile = await createSubuser(account, { products: ["mobile"] });
    const deleted = await createSubuser(account);
    await call("DELETE", `/v1/subusers/${deleted.id}`, { token: account.token });
    const foreign = await createSubuser(stranger);
    const residentialKey = (await makeKey(account.token, { products: ["residential"] })).token;
    const refused = [
      [account.token, MISSING("sub")],
      [account.token, deleted.id],
      [account.token, foreign.id],
      [account.token, "not-an-id"],
      [residentialKey, mobile.id],
    ] as const;
    for (const [token, id] of refused) {
      const answer = await keyCall(token, "POST", "/api-keys", { subuser_ids: [residential.id, id] });
      expect(answer, id).toMatchObject({ status: 404, body: { code: "subuser_not_found" } });
    }
    const key = (await makeKey(account.token, { subuser_ids: [residential.id] })).id;
    expect((await keyCall(account.token, "PATCH", `/api-keys/${key}`, { subuser_ids: [foreign.id] })).status).toBe(404);
    // Bounded: 1 to 1,000 ids.
    for (const ids of [[], Array.from({ length: 1001 }, () => residential.id)]) {
      expect((await keyCall(account.token, "POST", "/api-keys", { subuser_ids: ids })).status).toBe(422);
    }
  });

  it("a bound key makes keys bound to some of its own sub-users only: omitted inherits its binding, a subset is allowed, another sub-user is unknown to it, unbound is 403 insufficient_scope", async () => {
    const account = await createAccount();
    const [a, b, c] = [await createSubuser(account), await createSubuser(account), await createSubuser(account)];
    const bound = (await makeKey(account.token, { subuser_ids: [a.id, b.id] })).token;
    expect((await keyCall(bound, "POST", "/api-keys", {})).body.subuser_ids).toEqual([a.id, b.id]);
    expect((await keyCall(bound, "POST", "/api-keys", { subuser_ids: [b.id] })).body.subuser_ids).toEqual([b.id]);
    expect(await keyCall(bound, "POST", "/api-keys", { subuser_ids: [a.id, c.id] })).toMatchObject({
      status: 404,
      body: { code: "subuser_not_found" },
    });
    expect(await keyCall(bound, "POST", "/api-keys", { subuser_ids: null })).toMatchObject({
      status: 403,
      body: { code: "insufficient_scope" },
    });
    // Changing a key follows the same rule; a key it does not see (bound beyond it, or unbound) is unknown to it.
    const narrow = (await makeKey(bound, { subuser_ids: [a.id] })).id;
    expect((await keyCall(bound, "PATCH", `/api-keys/${narrow}`, { subuser_ids: [c.id] })).status).toBe(404);
    expect((await keyCall(bound, "PATCH", `/api-keys/${narrow}`, { subuser_ids: null })).status).toBe(403);
    expect((await keyCall(bound, "PATCH", `/api-keys/${narrow}`, { subuser_ids: [b.id] })).status).toBe(200);
    const wide = (await makeKey(account.token, { subuser_ids: [a.id, c.id] })).id;
    for (const id of [wide, account.keyId]) {
      expect((await keyCall(bound, "GET", `/api-keys/${id}`)).body.code).toBe("api_key_not_found");
      expect((await keyCall(bound, "POST", `/api-keys/${id}/rotate`, {})).body.code).toBe("api_key_not_found");
    }
    const listed = (await keyCall(bound, "GET", "/api-keys")).body.data.map((key: any) => key.id);
    expect(listed).not.toContain(wide);
    expect(listed).not.toContain(account.keyId);
    // Without api_keys:write, no key at all (the scopes apply as to any key).
    const reader = (await makeKey(account.token, { subuser_ids: [a.id], scopes: { subusers: "write" } })).token;
    expect((await keyCall(reader, "POST", "/api-keys", {})).body.code).toBe("insufficient_scope");
  });

  it("a bound key rotates its sub-users' passwords and edits their whitelists, but changes no limit, cap, status or label, creates and deletes no sub-user: 403 subuser_binding", async () => {
    const account = await createAccount();
    const mine = await createSubuser(account);
    const bound = (await makeKey(account.token, { subuser_ids: [mine.id] })).token;
    expect((await keyCall(bound, "POST", `/subusers/${mine.id}/rotate-password`)).status).toBe(200);
    const entry = await keyCall(bound, "POST", "/whitelists", {
      subuser: mine.id,
      product: "residential",
      ip: "198.51.100.1",
    });
    expect(entry.status).toBe(201);
    expect((await keyCall(bound, "DELETE", `/whitelists/${entry.body.id}`)).status).toBe(200);
    for (const patch of [
      { concurrent_max: 5 },
      { rps_max: 5 },
      { traffic_limit_gb: 1 },
      { status: "disabled" },
      { label: "renamed" },
      { spike_action: "disable" },
    ]) {
      expect(await keyCall(bound, "PATCH", `/subusers/${mine.id}`, patch), JSON.stringify(patch)).toMatchObject({
        status: 403,
        body: { code: "subuser_binding" },
      });
    }
    expect((await keyCall(bound, "GET", `/subusers/${mine.id}`)).body).toMatchObject({
      status: "active",
      label: mine.label,
    });
    expect((await keyCall(bound, "POST", "/subusers", { label: "new-one", products: ["residential"] })).body.code).toBe(
      "subuser_binding",
    );
    expect((await keyCall(bound, "DELETE", `/subusers/${mine.id}`)).body.code).toBe("subuser_binding");
    for (const path of [
      "/users/me",
      "/residential/balance",
      "/orders",
      "/subscriptions",
      "/audit-events",
      "/reports",
      "/events",
    ]) {
      expect((await keyCall(bound, "GET", path)).body.code, path).toBe("subuser_binding");
    }
  });
});

// ── Lists and aggregates ────────────────────────────────────────────────────────────────────────────

describe("what a bound key reads covers its sub-users alone", () => {
  it("sub-user lists, traffic totals and groups, the request log and sessions cover only its sub-users; group_by=domain is 403 subuser_binding", async () => {
    const account = await createAccount({ plan: "enterprise", bandwidthGb: 5 });
    const [a, b, other] = [await createSubuser(account), await createSubuser(account), await createSubuser(account)];
    const bound = (await makeKey(account.token, { subuser_ids: [a.id, b.id] })).token;
    const records = [
      usageRecord(username(a.name), { bytes_in: 1_000, bytes_out: 0 }),
      usageRecord(username(b.name), { bytes_in: 20_000, bytes_out: 0 }),
      usageRecord(username(other.name), { bytes_in: 300_000, bytes_out: 0 }),
    ];
    expect((await reportUsage(records)).status).toBe(202);
    const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    const read = (token: string, query: string) => keyCall(token, "GET", `/residential/traffic?${range}${query}`);
    await eventually(
      async () => (await read(account.token, "")).body.rows[0]?.bytes_in,
      (bytes) => bytes === 321_000,
    );
    expect((await read(bound, "")).body.rows).toMatchObject([{ bytes_in: 21_000, requests: 2 }]);
    const bySubuser = (await read(bound, "&group_by=subuser")).body.rows;
    expect(bySubuser.map((row: any) => [row.subuser, row.bytes_in])).toEqual(
      [
        [a.id, 1_000],
        [b.id, 20_000],
      ].sort(),
    );
    expect((await read(bound, "&group_by=region")).body.rows).toMatchObject([{ bytes_in: 21_000 }]);
    expect((await read(bound, "&group_by=domain")).body.code).toBe("subuser_binding");
    expect((await read(bound, `&subuser=${other.id}`)).body.code).toBe("subuser_not_found");

    const listed = (await keyCall(bound, "GET", "/subusers")).body.data.map((s: any) => s.id);
    expect(listed.sort()).toEqual([a.id, b.id].sort());
    const search = (await keyCall(bound, "GET", `/subusers?label_contains=${other.label}`)).body.data;
    expect(search).toEqual([]);
    const logged = (await keyCall(bound, "GET", "/residential/requests")).body.data.map((r: any) => r.request_id);
    expect(logged.sort()).toEqual([records[0]?.request_id, records[1]?.request_id].sort());

    await startSession(account, a, "residential", "s1");
    await startSession(account, other, "residential", "s2");
    const sessions = (await keyCall(bound, "GET", "/residential/sessions")).body.data;
    expect(sessions.map((session: any) => session.subuser)).toEqual([a.id]);
  });

  it("a bound key's live tail shows its sub-users' requests alone, and closes (4004) once the key no longer reaches every sub-user it shows", async () => {
    const account = await createAccount({ plan: "enterprise" });
    const [a, b, other] = [await createSubuser(account), await createSubuser(account), await createSubuser(account)];
    const key = await makeKey(account.token, { subuser_ids: [a.id, b.id] });
    const response = await call("GET", "/v1/residential/requests/tail", {
      token: key.token,
      headers: { Upgrade: "websocket" },
    });
    expect(response.status).toBe(101);
    const socket = response.webSocket as WebSocket;
    socket.accept();
    const frames: any[] = [];
    let closed: number | null = null;
    socket.addEventListener("message", (event) => frames.push(JSON.parse(String(event.data))));
    socket.addEventListener("close", (event) => {
      closed = event.code;
    });
    const records = [usageRecord(username(a.name)), usageRecord(username(other.name))];
    expect((await reportUsage(records)).status).toBe(202);
    await eventually(
      async () => frames.filter((frame) => frame.type === "request").length,
      (count) => count >= 1,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const shown = frames.filter((frame) => frame.type === "request").map((frame) => frame.request.subuser);
    expect(shown).toEqual([a.id]);
    // Narrowed to `a` alone: the tail showed `b` too, so it closes.
    expect((await keyCall(account.token, "PATCH", `/api-keys/${key.id}`, { subuser_ids: [a.id] })).status).toBe(200);
    await eventually(
      async () => closed,
      (code) => code === 4004,
    );
  });
});

// ── MCP ─────────────────────────────────────────────────────────────────────────────────────────────

describe("the MCP server under a bound key", () => {
  it("lists only the tools open to bound keys, and its tools reach only the key's sub-users: another's id is unknown, an account-wide call is refused 403 subuser_binding", async () => {
    const account = await createAccount();
    const [mine, other] = [await createSubuser(account), await createSubuser(account)];
    const bound = (await makeKey(account.token, { subuser_ids: [mine.id] })).token;
    const client = await connect(bound);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(["listSubusers", "getSubuser", "rotateSubuserPassword", "getTraffic"]),
    );
    for (const closed of ["createSubuser", "deleteSubuser", "getAccount", "createOrder", "listAuditEvents"]) {
      expect(names).not.toContain(closed);
    }
    const page = await callTool(client, "listSubusers", {});
    expect(page.structuredContent?.data.map((s: any) => s.id)).toEqual([mine.id]);
    expect(JSON.stringify(page)).not.toContain(other.id);
    const theirs = await callTool(client, "getSubuser", { id: other.id });
    expect(theirs.isError).toBe(true);
    expect(theirs.structuredContent?.code).toBe("subuser_not_found");
    // A hidden tool called by name is refused as the API refuses it.
    const order = await callTool(client, "createOrder", { body: { product: "residential", gb: 1 } });
    expect(order.structuredContent?.code).toBe("subuser_binding");
    await client.close();
  });
});

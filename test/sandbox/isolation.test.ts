import { describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { runCron } from "../helpers/cron";
import { ADMIN_TOKEN, admin, call, json } from "../helpers/http";
import { sandboxOf } from "../helpers/sandbox";
import { authorize, createSubuser, username } from "../helpers/subusers";
import { eventually } from "../helpers/usage";

const get = async (account: TestAccount, path: string) => call("GET", `/v1${path}`, { token: account.token });
const post = (account: TestAccount, path: string, body: unknown) =>
  call("POST", `/v1${path}`, { token: account.token, body });

async function ispOrder(account: TestAccount) {
  const subuser = await createSubuser(account, { products: ["isp"] });
  const response = await post(account, "/orders", {
    product: "isp",
    country: "US",
    city: "la",
    asn: 7922,
    quantity: 5,
    months: 1,
    subuser: subuser.id,
  });
  expect(response.status).toBe(201);
  return json(response);
}

async function available(account: TestAccount, city: string): Promise<number> {
  const inventory = await json(await get(account, "/isp/inventory?country=US&asn=7922"));
  const row = inventory.data.find((entry: any) => entry.asn === 7922);
  return row.cities.find((entry: any) => entry.city === city).available;
}

describe("sandbox keys and the sandbox twin", () => {
  it("an admin issues a test_ key (mode test) that acts on a sandbox twin, created once and reused", async () => {
    const live = await createAccount({ plan: "pro" });
    const first = await json(await admin("POST", `/accounts/${live.id}/api-keys`, { mode: "test" }));
    expect(first.token).toMatch(/^test_[0-9A-Za-z]{64}$/);
    expect(first.mode).toBe("test");
    expect(first.account_id).toMatch(/^usr_/);
    expect(first.account_id).not.toBe(live.id);
    const second = await json(await admin("POST", `/accounts/${live.id}/api-keys`, { mode: "test" }));
    expect(second.account_id).toBe(first.account_id);
    const liveKey = await json(await admin("POST", `/accounts/${live.id}/api-keys`, {}));
    expect(liveKey).toMatchObject({ mode: "live", account_id: live.id });
    expect(liveKey.token).toMatch(/^live_/);
    const listed = await json(await admin("GET", `/accounts/${live.id}/api-keys`));
    const modes = listed.data.map((key: any) => [key.id, key.mode, key.account_id, key.token_hint.slice(0, 5)]);
    expect(modes).toEqual([
      [liveKey.id, "live", live.id, "live_"],
      [second.id, "test", first.account_id, "test_"],
      [first.id, "test", first.account_id, "test_"],
      [live.keyId, "live", live.id, "live_"],
    ]);
  });

  it("keys are issued only on live accounts: a twin's id is 422, an unknown id 404", async () => {
    const live = await createAccount();
    const sandbox = await sandboxOf(live);
    const onTwin = await admin("POST", `/accounts/${sandbox.id}/api-keys`, { mode: "test" });
    expect(onTwin.status).toBe(422);
    expect((await json(onTwin)).code).toBe("invalid_request");
    const unknown = await admin("POST", "/accounts/usr_00000000000000000000000000/api-keys", { mode: "test" });
    expect(unknown.status).toBe(404);
  });

  it("the twin mirrors the live plan (also after a plan change), opens with $1,000 and its own id", async () => {
    const live = await createAccount({ plan: "starter", balance_usd: 5 });
    const sandbox = await sandboxOf(live);
    const me = await json(await get(sandbox, "/users/me"));
    expect(me).toMatchObject({ id: sandbox.id, plan: "starter", livemode: false, kyc_status: "approved" });
    expect(me.balance.amount).toBe(1000);
    expect(me.email).toMatch(/@sandbox\.invalid$/);
    expect(await json(await get(live, "/users/me"))).toMatchObject({ id: live.id, livemode: true });
    expect((await admin("PATCH", `/accounts/${live.id}`, { plan: "business" })).status).toBe(200);
    expect((await json(await get(sandbox, "/users/me"))).plan).toBe("business");
  });
});

describe("a live key never sees sandbox data, and the reverse", () => {
  it("sub-users: lists are separate and another mode's id answers 404 subuser_not_found", async () => {
    const live = await createAccount();
    const sandbox = await sandboxOf(live);
    const liveSub = await createSubuser(live, { label: "same-label" });
    const testSub = await createSubuser(sandbox, { label: "same-label" });
    const liveIds = (await json(await get(live, "/subusers"))).data.map((s: any) => s.id);
    const testIds = (await json(await get(sandbox, "/subusers"))).data.map((s: any) => s.id);
    expect(liveIds).toEqual([liveSub.id]);
    expect(testIds).toEqual([testSub.id]);
    for (const [account, id] of [
      [sandbox, liveSub.id],
      [live, testSub.id],
    ] as const) {
      const response = await get(account, `/subusers/${id}`);
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("subuser_not_found");
      expect((await call("DELETE", `/v1/subusers/${id}`, { token: account.token })).status).toBe(404);
    }
  });

  it("orders, whitelists and subscriptions: each mode lists only its own and 404s the other's ids", async () => {
    const live = await createAccount({ balance_usd: 500 });
    const sandbox = await sandboxOf(live);
    const ids: Record<string, Record<string, string>> = {};
    for (const [mode, account] of [
      ["live", live],
      ["test", sandbox],
    ] as const) {
      const subuser = await createSubuser(account);
      const order = await json(await post(account, "/orders", { product: "residential", gb: 1 }));
      const entry = await json(
        await post(account, "/whitelists", { subuser: subuser.id, product: "residential", ip: "198.51.100.7" }),
      );
      const subscription = await json(
        await post(account, "/subscriptions", { product: "mobile", plan: "starter", cycle: "monthly" }),
      );
      ids[mode] = { order: order.id, entry: entry.id, subscription: subscription.id, subuser: subuser.id };
    }
    for (const [mine, theirs, account] of [
      ["live", "test", live],
      ["test", "live", sandbox],
    ] as const) {
      const own = ids[mine] as Record<string, string>;
      const other = ids[theirs] as Record<string, string>;
      expect((await json(await get(account, "/orders"))).data.map((o: any) => o.id)).toEqual([own.order]);
      expect((await get(account, `/orders/${other.order}`)).status).toBe(404);
      expect((await json(await get(account, "/subscriptions"))).data.map((s: any) => s.id)).toEqual([own.subscription]);
      expect((await get(account, `/subscriptions/${other.subscription}`)).status).toBe(404);
      expect((await get(account, `/whitelists?subuser=${other.subuser}`)).status).toBe(404);
      expect((await call("DELETE", `/v1/whitelists/${other.entry}`, { token: account.token })).status).toBe(404);
    }
  });

  it("ISP: sandbox orders draw simulated IPs (198.18.0.0/15) and never take live inventory; batches 404 across", async () => {
    const live = await createAccount({ balance_usd: 500 });
    const sandbox = await sandboxOf(live);
    const liveBefore = await available(live, "la");
    const sandboxBefore = await available(sandbox, "la");
    const order = await ispOrder(sandbox);
    expect(await available(live, "la")).toBe(liveBefore);
    expect(await available(sandbox, "la")).toBe(sandboxBefore - 5);
    const batchId = order.details.batch_id;
    expect((await get(live, `/isp/batches/${batchId}`)).status).toBe(404);
    expect((await json(await get(live, "/isp/batches"))).data).toEqual([]);
    await runCron(Date.now() + 6_000);
    const ips = await json<Array<Record<string, any>>>(await get(sandbox, `/isp/batches/${batchId}/ips?format=json`));
    expect(ips).toHaveLength(5);
    for (const ip of ips) expect(ip.ip).toMatch(/^198\.(18|19)\./);
  });

  it("sessions, traffic, the request log and proxy tests of the sandbox are invisible to the live key", async () => {
    const live = await createAccount();
    const sandbox = await sandboxOf(live);
    await post(sandbox, "/orders", { product: "residential", gb: 1 });
    const subuser = await createSubuser(sandbox);
    const session = await json(
      await post(sandbox, "/test-helpers/sessions", { subuser: subuser.id, session_id: "iso", sesstime: 5 }),
    );
    await post(sandbox, "/test-helpers/traffic", { subuser: subuser.id, requests: 20 });
    const run = await json(
      await post(sandbox, "/tools/proxy-test", { username: username(subuser.name), password: subuser.password }),
    );
    const window = `from=${new Date(Date.now() - 7_200_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`;
    await eventually(
      async () => json(await get(sandbox, `/residential/traffic?${window}`)),
      (body) => body.rows.reduce((sum: number, row: any) => sum + row.requests, 0) === 21,
    );
    expect((await json(await get(sandbox, `/residential/sessions/${session.id}`))).id).toBe(session.id);
    expect((await json(await get(sandbox, `/tools/proxy-tests/${run.id}`))).id).toBe(run.id);

    const sessionFromLive = await get(live, `/residential/sessions/${session.id}`);
    expect(sessionFromLive.status).toBe(404);
    expect((await json(sessionFromLive)).code).toBe("session_not_found");
    expect((await json(await get(live, "/residential/sessions"))).data).toEqual([]);
    const liveTraffic = await json(await get(live, `/residential/traffic?${window}`));
    expect(liveTraffic.rows.reduce((sum: number, row: any) => sum + row.requests, 0)).toBe(0);
    expect((await json(await get(live, "/residential/requests"))).data).toEqual([]);
    expect((await get(live, `/tools/proxy-tests/${run.id}`)).status).toBe(404);
    expect((await json(await get(live, "/tools/proxy-tests"))).data).toEqual([]);
  });

  it("reports: a sandbox report is unknown to the live key (404 report_not_found) and absent from its list", async () => {
    const live = await createAccount({ plan: "pro" });
    const sandbox = await sandboxOf(live);
    const report = {
      name: "Sandbox traffic",
      type: "traffic",
      format: "csv",
      destination: { type: "email", email: "ops@example.com" },
    };
    const created = await post(sandbox, "/reports", report);
    expect(created.status).toBe(201);
    const { id } = await json(created);
    expect((await get(sandbox, `/reports/${id}`)).status).toBe(200);
    const fromLive = await get(live, `/reports/${id}`);
    expect(fromLive.status).toBe(404);
    expect((await json(fromLive)).code).toBe("report_not_found");
    expect(JSON.stringify(await json(await get(live, "/reports")))).not.toContain(id);
  });

  it("ISP provisioning takes seconds in the sandbox (SANDBOX_ISP_PROVISIONING_DELAY_S) and minutes live", async () => {
    const live = await createAccount({ balance_usd: 500 });
    const sandbox = await sandboxOf(live);
    const liveOrder = await ispOrder(live);
    const testOrder = await ispOrder(sandbox);
    await runCron(Date.now() + 6_000);
    expect((await json(await get(sandbox, `/orders/${testOrder.id}`))).status).toBe("completed");
    expect((await json(await get(sandbox, `/isp/batches/${testOrder.details.batch_id}`))).status).toBe("active");
    expect((await json(await get(live, `/orders/${liveOrder.id}`))).status).toBe("provisioning");
  });

  it("sandbox sub-users get `t` gateway names that the gateway contract refuses like unknown ones (407)", async () => {
    const live = await createAccount({ bandwidthGb: 1 });
    const sandbox = await sandboxOf(live);
    await post(sandbox, "/orders", { product: "residential", gb: 1 });
    const liveSub = await createSubuser(live);
    const testSub = await createSubuser(sandbox);
    expect(liveSub.name).toMatch(/^s/);
    expect(testSub.name).toMatch(/^t/);
    const refused = await authorize({ username: username(testSub.name), password: testSub.password });
    expect(refused).toMatchObject({ allow: false, status: 407, error_code: "auth-failed" });
    const allowed = await authorize({ username: username(liveSub.name), password: liveSub.password });
    expect(allowed.allow).toBe(true);
  });
});

describe("livemode on every response", () => {
  it("is true with a live key and false with a test key, on objects, lists, writes and replays; errors keep their shape", async () => {
    const live = await createAccount();
    const sandbox = await sandboxOf(live);
    for (const [account, livemode] of [
      [live, true],
      [sandbox, false],
    ] as const) {
      const created = await call("POST", "/v1/subusers", {
        token: account.token,
        body: { label: "lm", products: ["residential"] },
        headers: { "Idempotency-Key": `lm-${livemode}` },
      });
      const body = await json(created);
      expect(body.livemode).toBe(livemode);
      const replay = await call("POST", "/v1/subusers", {
        token: account.token,
        body: { label: "lm", products: ["residential"] },
        headers: { "Idempotency-Key": `lm-${livemode}` },
      });
      expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
      expect((await json(replay)).livemode).toBe(livemode);
      const list = await json(await get(account, "/subusers"));
      expect(list.livemode).toBe(livemode);
      expect(list.data[0].livemode).toBeUndefined();
      const missing = await json(await get(account, "/subusers/sub_00000000000000000000000000"));
      expect(Object.keys(missing).sort()).toEqual(["code", "doc_url", "message", "request_id"]);
    }
  });

  it("the OpenAPI document declares it once per JSON success response (allOf with Livemode), not on arrays", async () => {
    const document = await json(await call("GET", "/v1/openapi.json"));
    expect(document.components.schemas.Livemode.required).toEqual(["livemode"]);
    const schemaOf = (path: string, method: string, status: string) =>
      document.paths[path][method].responses[status].content["application/json"].schema;
    expect(schemaOf("/subusers/{id}", "get", "200").allOf).toEqual([
      { $ref: "#/components/schemas/Subuser" },
      { $ref: "#/components/schemas/Livemode" },
    ]);
    expect(schemaOf("/subusers", "get", "200").allOf[1]).toEqual({ $ref: "#/components/schemas/Livemode" });
    expect(schemaOf("/subusers/{id}", "get", "404").allOf).toBeUndefined();
    const internal = await json(await call("GET", "/internal/openapi.json", { token: ADMIN_TOKEN }));
    expect(JSON.stringify(internal)).not.toContain("Livemode");
  });
});

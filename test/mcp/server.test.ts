import * as OTPAuth from "otpauth";
import { describe, expect, it } from "vitest";
import { errorCatalogue } from "../../src/platform/errors";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { orderBatch } from "../helpers/isp";
import { sandboxOf } from "../helpers/sandbox";
import { callTool, connect } from "./client";

const TEST_HELPERS = [
  "generateTestTraffic",
  "startTestSession",
  "expireTestIspBatch",
  "renewTestSubscription",
  "topUpTestBalance",
];

async function keyWithScopes(account: TestAccount, scopes: Record<string, string>): Promise<string> {
  const response = await call("POST", "/v1/api-keys", { token: account.token, body: { scopes } });
  expect(response.status).toBe(201);
  return (await json(response)).token;
}

async function subuserCount(account: TestAccount): Promise<number> {
  return (await json(await call("GET", "/v1/subusers", { token: account.token }))).data.length;
}

describe("the MCP server, through the official SDK client", () => {
  it("initializes: the server names itself, its tools and resources capabilities and how to use them", async () => {
    const account = await createAccount();
    const client = await connect(account.token);
    expect(client.getServerVersion()).toMatchObject({ name: "proxy-account-api", title: "Proxy Account API" });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    expect(client.getInstructions()).toContain("idempotency_key");
    await client.close();
  });

  it("a full key sees every operation but the sandbox's test helpers; a read-only key sees no write tool", async () => {
    const account = await createAccount();
    const full = await connect(account.token);
    const fullTools = (await full.listTools()).tools;
    const names = fullTools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["getAccount", "createSubuser", "createOrder", "deleteApiKey"]));
    for (const helper of TEST_HELPERS) expect(names).not.toContain(helper);

    const reader = await connect(await keyWithScopes(account, { subusers: "read", billing: "read" }));
    const readerTools = (await reader.listTools()).tools;
    expect(readerTools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["listSubusers", "getSubuser", "listOrders", "quoteOrder", "getBandwidthBalance"]),
    );
    expect(readerTools.filter((tool) => tool.annotations?.readOnlyHint !== true).map((tool) => tool.name)).toEqual([]);
    // Nothing of an area the key has no scope for, even to read.
    expect(readerTools.map((tool) => tool.name)).not.toContain("listApiKeys");
    expect(readerTools.length).toBeLessThan(fullTools.length);
    await Promise.all([full.close(), reader.close()]);
  });

  it("a read tool answers with the API's JSON as structured content and as text", async () => {
    const account = await createAccount();
    const client = await connect(account.token);
    const result = await callTool(client, "getAccount");
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: account.id, email: account.email, livemode: true });
    expect(JSON.parse(result.content[0]?.text as string)).toEqual(result.structuredContent);
    expect(result._meta?.request_id).toMatch(/^req_/);
    const page = await callTool(client, "listSubusers", { limit: 1 });
    expect(page.structuredContent).toMatchObject({ data: [], next_cursor: null });
    await client.close();
  });

  it("a write tool acts once per idempotency key: a replay answers the first result and creates nothing", async () => {
    const account = await createAccount();
    const client = await connect(account.token);
    const created = await callTool(client, "createSubuser", { label: "mcp-eu-1", products: ["residential"] });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ label: "mcp-eu-1", products: ["residential"] });
    // The key it was sent with was generated and is returned, to retry with.
    const key = created._meta?.idempotency_key as string;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(created._meta?.idempotent_replayed).toBe(false);
    expect(created.content.at(-1)?.text).toContain(key);

    const args = { label: "mcp-eu-1", products: ["residential"], idempotency_key: key };
    const replayed = await callTool(client, "createSubuser", args);
    expect(replayed.isError).toBeFalsy();
    expect(replayed.structuredContent).toEqual(created.structuredContent);
    expect(replayed._meta).toMatchObject({ idempotency_key: key, idempotent_replayed: true });
    expect(await subuserCount(account)).toBe(1);

    // A fresh call (no key given) is a new request: the label is now taken.
    const again = await callTool(client, "createSubuser", { label: "mcp-eu-1", products: ["residential"] });
    expect(again.structuredContent?.code).toBe("label_taken");
    // The same key with other arguments is refused, as the API refuses it.
    const reused = await callTool(client, "createSubuser", { ...args, label: "mcp-eu-2" });
    expect(reused.structuredContent?.code).toBe("idempotency_key_reused");
    expect(await subuserCount(account)).toBe(1);
    await client.close();
  });

  it("the same write sent twice at once with one key acts once", async () => {
    const account = await createAccount();
    const client = await connect(account.token);
    const args = { label: "mcp-race", products: ["mobile"], idempotency_key: "race-1" };
    const results = await Promise.all([
      callTool(client, "createSubuser", args),
      callTool(client, "createSubuser", args),
    ]);
    for (const result of results) {
      // Either the answer (first or replayed) or "still in progress, retry": never a second sub-user.
      if (result.isError) expect(result.structuredContent?.code).toBe("idempotency_key_in_use");
      else expect(result.structuredContent?.label).toBe("mcp-race");
    }
    expect(await subuserCount(account)).toBe(1);
    await client.close();
  });

  it("a refused call is a tool error with the API's code, message, doc_url and request_id", async () => {
    const account = await createAccount();
    const reader = await connect(await keyWithScopes(account, { subusers: "read" }));
    // A tool the key does not see is refused exactly as the API refuses the request.
    const refused = await callTool(reader, "createSubuser", { label: "nope", products: ["residential"] });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      code: "insufficient_scope",
      message: "This API key's scopes do not include subusers:write.",
      doc_url: "https://api.test/docs/errors#insufficient_scope",
      request_id: expect.stringMatching(/^req_/),
    });
    expect(refused.content[0]?.text).toContain("https://api.test/docs/errors#insufficient_scope");
    // A weaker key cannot mint a stronger one through a tool either.
    const minted = await callTool(reader, "createApiKey", { scopes: { subusers: "write" } });
    expect(minted.structuredContent?.code).toBe("insufficient_scope");
    expect(await subuserCount(account)).toBe(0);

    // Invalid arguments come back as the API's invalid_request, with each field's problem.
    const full = await connect(account.token);
    const invalid = await callTool(full, "createSubuser", { label: "Not Valid!", products: ["residential"] });
    expect(invalid.structuredContent).toMatchObject({ code: "invalid_request", details: [{ field: "label" }] });
    const unknown = await callTool(full, "getAccount", { surprise: true });
    expect(unknown.structuredContent).toMatchObject({ code: "invalid_request", details: [{ field: "surprise" }] });
    await Promise.all([reader.close(), full.close()]);
  });

  it("another account's resource answers exactly like one that does not exist", async () => {
    const owner = await createAccount();
    const other = await createAccount();
    const ownerClient = await connect(owner.token);
    const created = await callTool(ownerClient, "createSubuser", { label: "private", products: ["residential"] });
    const id = created.structuredContent?.id as string;
    const otherClient = await connect(other.token);
    const foreign = await callTool(otherClient, "getSubuser", { id });
    const missing = await callTool(otherClient, "getSubuser", { id: "sub_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" });
    expect(foreign.isError).toBe(true);
    expect(foreign.structuredContent?.code).toBe("subuser_not_found");
    expect(foreign.structuredContent?.message).toBe(missing.structuredContent?.message);
    const deleted = await callTool(otherClient, "deleteSubuser", { id });
    expect(deleted.structuredContent?.code).toBe("subuser_not_found");
    // A dot segment cannot steer the request to another path.
    const steered = await callTool(otherClient, "getSubuser", { id: ".." });
    expect(steered.structuredContent).toMatchObject({ code: "invalid_request", details: [{ field: "id" }] });
    expect((await callTool(ownerClient, "getSubuser", { id })).structuredContent?.id).toBe(id);
    await Promise.all([ownerClient.close(), otherClient.close()]);
  });

  it("a sandbox key acts on the sandbox and sees the test helpers; a live key calling one is refused", async () => {
    const live = await createAccount();
    const sandbox = await sandboxOf(live);
    const client = await connect(sandbox.token);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(TEST_HELPERS));
    const created = await callTool(client, "createSubuser", { label: "sandboxed", products: ["residential"] });
    expect(created.structuredContent).toMatchObject({ label: "sandboxed", livemode: false });
    const topUp = await callTool(client, "topUpTestBalance", { amount_usd: 5 });
    expect(topUp.structuredContent).toMatchObject({ livemode: false, balance: { amount: 1005 } });
    expect(await subuserCount(live)).toBe(0);

    const liveClient = await connect(live.token);
    const refused = await callTool(liveClient, "topUpTestBalance", { amount_usd: 5 });
    expect(refused.structuredContent).toMatchObject({ code: "sandbox_key_required" });
    await Promise.all([client.close(), liveClient.close()]);
  });

  it("an action gated by MFA takes the code as mfa_code", async () => {
    const account = await createAccount();
    const client = await connect(account.token);
    const enrollment = await callTool(client, "enrollMfa", { method: "totp" });
    const secret = OTPAuth.Secret.fromBase32(enrollment.structuredContent?.secret as string);
    const totp = new OTPAuth.TOTP({ secret, digits: 6, period: 30 }).generate();
    expect((await callTool(client, "verifyMfa", { code: totp })).structuredContent?.mfa_enabled).toBe(true);
    const withoutCode = await callTool(client, "createApiKey", { name: "agent" });
    expect(withoutCode.structuredContent?.code).toBe("mfa_required");
    // A TOTP code is good once: the second factor here is a recovery code.
    const recovery = enrollment.structuredContent?.recovery_codes[0] as string;
    const withCode = await callTool(client, "createApiKey", { name: "agent", mfa_code: recovery });
    expect(withCode.structuredContent).toMatchObject({ name: "agent", token: expect.stringMatching(/^live_/) });
    await client.close();
  });

  it("an operation answering CSV returns it as text content", async () => {
    const account = await createAccount({ balance_usd: 1000 });
    const { batchId } = await orderBatch(account, { quantity: 5 });
    const client = await connect(account.token);
    const result = await callTool(client, "listIspBatchIps", { id: batchId, format: "csv" });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]).toMatchObject({ type: "text" });
    expect(result.content[0]?.text.split("\n")[0]).toBe("ip,port,user,pass,country,city,asn");
    expect(result.structuredContent).toBeUndefined();
    await client.close();
  });

  it("getSubuserProxyList returns the list as text an agent can hand on; a bad argument is a tool error naming it", async () => {
    const account = await createAccount();
    const subuser = await json(
      await call("POST", "/v1/subusers", { token: account.token, body: { label: "mcp-list", products: ["mobile"] } }),
    );
    const client = await connect(account.token);
    const result = await callTool(client, "getSubuserProxyList", {
      id: subuser.id,
      country: "us",
      session: "sticky",
      count: 3,
      format: "url",
    });
    expect(result.isError).toBeFalsy();
    const lines = result.content[0]?.text.trim().split("\n") ?? [];
    expect(lines).toHaveLength(3);
    for (const line of lines)
      expect(line).toMatch(new RegExp(`^http://user_${subuser.name}-type-mob-region-us-session-`));
    const refused = await callTool(client, "getSubuserProxyList", { id: subuser.id, country: "us", count: 3 });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: "invalid_request", details: [{ field: "count" }] });
    await client.close();
  });

  it("resources: the error codes (as /docs/errors lists them) and the OpenAPI document the worker serves", async () => {
    const account = await createAccount();
    const client = await connect(account.token);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(["docs://errors", "docs://openapi/v1"]);
    const errors = (await client.readResource({ uri: "docs://errors" })).contents[0];
    expect(errors?.mimeType).toBe("text/markdown");
    const text = errors && "text" in errors ? errors.text : "";
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      const section = text.slice(text.indexOf(`## \`${code}\` (${entry.status})`));
      expect(section, code).toContain(`**Fix.** ${entry.fix}`);
      expect(section, code).toContain(`https://api.test/docs/errors#${code}`);
    }
    const openapi = (await client.readResource({ uri: "docs://openapi/v1" })).contents[0];
    const served = await json(await call("GET", "/v1/openapi.json"));
    expect(JSON.parse(openapi && "text" in openapi ? openapi.text : "")).toEqual(served);
    await expect(client.readResource({ uri: "docs://nothing" })).rejects.toThrow(/Resource not found/);
    await client.close();
  });
});

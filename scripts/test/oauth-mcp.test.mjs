// OAuth for /mcp end to end: the official MCP SDK client's OAuth support against `wrangler dev`, the consent given in
// Chromium. Register, authorize, exchange, list and call tools within the granted scopes only, revoke and see the
// next call refused within a second.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromium } from "playwright-core";
import { prepare, startWorker } from "../lib/local-worker.mjs";

const CHROMIUM = "/usr/bin/chromium";
let worker;
let base;
let vars;
let browser;
let callback;
let callbackUrl;
const codes = [];

/** A free loopback port (none of the ones other local runs use). */
function freePort() {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const admin = async (method, route, body) => {
  const response = await fetch(`${base}/internal/admin${route}`, {
    method,
    headers: { Authorization: `Bearer ${vars.ADMIN_TOKEN}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  assert.ok(response.ok, `${method} ${route}: ${response.status} ${await response.clone().text()}`);
  return response.json();
};

/** The SDK's client side of OAuth, kept in memory; the authorization URL is handed to Chromium. */
class MemoryProvider {
  constructor() {
    this.saved = {};
    this.authorizationUrl = null;
  }
  get redirectUrl() {
    return callbackUrl;
  }
  get clientMetadata() {
    return {
      client_name: "E2E assistant",
      redirect_uris: [callbackUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      scope: "subusers:read account:read",
    };
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(client) {
    this.saved.client = client;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  redirectToAuthorization(url) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
}

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing`);
  const state = mkdtempSync(path.join(tmpdir(), "oauth-e2e-"));
  vars = prepare({ persistTo: state });
  ({ child: worker, base } = await startWorker(await freePort(), {
    quiet: true,
    persistTo: state,
    vars: { LOG_REQUESTS: "false" },
  }));
  callback = createServer((request, response) => {
    // Chromium also asks this server for its favicon.
    const code = new URL(request.url, "http://127.0.0.1").searchParams.get("code");
    if (code) codes.push(code);
    response.end("You can close this window.");
  });
  await new Promise((resolve) => callback.listen(0, "127.0.0.1", resolve));
  callbackUrl = `http://127.0.0.1:${callback.address().port}/callback`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
});

after(async () => {
  await browser?.close();
  callback?.close();
  worker?.kill();
});

test("an MCP client connects with OAuth, uses the granted tools only, and stops when the grant is revoked", async () => {
  const account = await admin("POST", "/accounts", { email: `oauth-${Date.now()}@example.com`, plan: "pro" });
  const owner = { email: `owner-${Date.now()}@example.com`, password: "correct horse battery staple" };
  await admin("POST", `/accounts/${account.id}/members`, { ...owner, name: "Owner" });

  const mcpUrl = new URL(`${base}/mcp`);
  const provider = new MemoryProvider();
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await assert.rejects(new Client({ name: "e2e", version: "1" }).connect(first), /Unauthorized/i);
  assert.ok(provider.saved.client?.client_id, "dynamic registration");
  assert.ok(provider.authorizationUrl, "authorization URL");

  // Consent in Chromium: sign in on the page, tick what the assistant may do, Allow.
  const page = await browser.newPage();
  await page.goto(provider.authorizationUrl.toString());
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password").fill(owner.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page
    .getByRole("heading", { name: /Allow E2E assistant/ })
    .waitFor({ timeout: 10_000 })
    .catch(async (error) => assert.fail(`${error.message}\n${page.url()}\n${await page.content()}`));
  for (const box of await page.locator('input[name="scope"]').all()) {
    const value = await box.getAttribute("value");
    if (["subusers:read", "account:read"].includes(value)) await box.check();
    else await box.uncheck();
  }
  await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole("button", { name: "Allow" }).click()]);
  await page.close();
  assert.equal(codes.length, 1);

  await first.finishAuth(codes[0]);
  const client = new Client({ name: "e2e", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  assert.ok(names.includes("getAccount") && names.includes("listSubusers"), names.join(","));
  assert.ok(!names.includes("createSubuser") && !names.includes("createOrder"), "write tools hidden");
  const account_ = await client.callTool({ name: "getAccount", arguments: {} });
  assert.equal(account_.isError, undefined, JSON.stringify(account_));
  const refused = await client.callTool({
    name: "createSubuser",
    arguments: { label: "x", products: ["residential"] },
  });
  assert.equal(refused.isError, true);
  assert.equal(refused.structuredContent.code, "insufficient_scope");

  // Revocation from the member's connected applications: the next call is refused within a second.
  const signIn = await fetch(`${base}/v1/auth/sign-in`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: base },
    body: JSON.stringify(owner),
  });
  const { csrf_token: csrf } = await signIn.json();
  const cookie = signIn.headers.get("set-cookie").split(";")[0];
  const grants = await (await fetch(`${base}/v1/oauth/grants`, { headers: { Cookie: cookie } })).json();
  assert.equal(grants.data.length, 1);
  assert.deepEqual(grants.data[0].scopes.sort(), ["account:read", "subusers:read"]);
  const started = Date.now();
  const revoked = await fetch(`${base}/v1/oauth/grants/${grants.data[0].id}`, {
    method: "DELETE",
    headers: { Cookie: cookie, "X-CSRF-Token": csrf, Origin: base },
  });
  assert.equal(revoked.status, 200);
  const after = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${provider.saved.tokens.access_token}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: {} }),
  });
  assert.equal(after.status, 401);
  assert.ok(Date.now() - started < 1000, `refused after ${Date.now() - started} ms`);
});

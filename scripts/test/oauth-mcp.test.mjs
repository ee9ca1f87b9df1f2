// OAuth for /mcp end to end: the official MCP SDK client's OAuth support against `wrangler dev`, the consent given in
// Chromium. Register, authorize, exchange, list and call tools within the granted scopes only; the console's
// Connected applications lists the grant (axe and screenshots at desktop width and 375 px), its Revoke ends it, and
// the next call is refused within a second.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { chromium } from "playwright-core";
import { axeViolations, go, openConsole, signInAsMember } from "../../console/test/browser-kit.mjs";
import { buildConsole } from "../lib/console-build.mjs";
import { prepare, startWorker } from "../lib/local-worker.mjs";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = path.join(import.meta.dirname, "..", "..", "test-results", "console");
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
  await buildConsole();
  mkdirSync(SHOTS, { recursive: true });
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

  // The console's Connected applications lists the grant: its client, redirect host, scopes, when, the member.
  const consoleUrl = `${base}/console/`;
  for (const [label, viewport] of [
    ["mobile", { width: 375, height: 812 }],
    ["desktop", { width: 1280, height: 900 }],
  ]) {
    const tab = await openConsole(browser, consoleUrl, viewport);
    await signInAsMember(tab.page, owner.email, owner.password);
    // At 375 px the menu folds into its toggle.
    if (label === "mobile") await tab.page.getByRole("button", { name: "Menu" }).click();
    await go(tab.page, "connected-apps");
    const rows = tab.page.getByRole("region", { name: "Connected applications" }).locator("tbody tr");
    assert.equal(await rows.count(), 1);
    const cells = await rows.first().locator("td").allTextContents();
    assert.deepEqual(cells.slice(0, 3), ["E2E assistant", "127.0.0.1", "account:read, subusers:read"]);
    assert.match(cells[3], /^\d{4}-\d\d-\d\d /, cells[3]);
    assert.notEqual(cells[4], "never", "used by the calls above");
    assert.equal(cells[5], `${owner.email} you`);
    await tab.page.screenshot({ path: path.join(SHOTS, `${label}-connected-apps.png`), fullPage: true });
    assert.deepEqual(await axeViolations(tab.page), [], label);
    if (label === "mobile") {
      assert.deepEqual(tab.problems, []);
      await tab.context.close();
      continue;
    }

    // Revoke there: the next call with the assistant's token is refused within a second.
    await rows.first().getByRole("button", { name: "Revoke" }).click();
    const dialog = tab.page.getByRole("dialog");
    await dialog.getByText(/Its access stops at once/).waitFor();
    assert.deepEqual(await axeViolations(tab.page), [], "revoke dialog");
    const deleted = tab.page.waitForResponse(
      (response) => response.request().method() === "DELETE" && response.url().includes("/v1/oauth/grants/"),
    );
    await dialog.getByRole("button", { name: "Revoke" }).click();
    assert.equal((await deleted).status(), 200);
    const started = Date.now();
    const refusedAfter = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${provider.saved.tokens.access_token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list", params: {} }),
    });
    assert.equal(refusedAfter.status, 401);
    assert.ok(Date.now() - started < 1000, `refused after ${Date.now() - started} ms`);
    await tab.page.getByText(/No connected applications/).waitFor();
    await tab.page.screenshot({ path: path.join(SHOTS, "desktop-connected-apps-revoked.png"), fullPage: true });

    // The API, with the owner's own session, answers the grant as revoked: listed no more, a second revoke 404.
    const grantId = /\/v1\/oauth\/grants\/([^/?]+)/.exec((await deleted).url())[1];
    const api = await tab.page.evaluate(async (id) => {
      const { csrf_token } = await (await fetch("/v1/auth/session")).json();
      const listed = await (await fetch("/v1/oauth/grants")).json();
      const again = await fetch(`/v1/oauth/grants/${id}`, {
        method: "DELETE",
        headers: { "X-CSRF-Token": csrf_token },
      });
      return { listed: listed.data.length, again: again.status };
    }, grantId);
    assert.deepEqual(api, { listed: 0, again: 404 });
    assert.deepEqual(tab.problems, []);
    await tab.context.close();
  }
});

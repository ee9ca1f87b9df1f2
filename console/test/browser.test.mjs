// The console in a real browser (Debian's Chromium through playwright-core) against `wrangler dev` and the local
// gateway: the journeys a customer takes, axe-core on every page, a screenshot of every page at desktop width and
// at 375 px (test-results/console/), and the figures the console is held to (JavaScript size, overview timing).
// The browser reaches nothing but this machine: every other request is aborted.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as OTPAuth from "otpauth";
import { eventually, proxiedGet, startStack, v1 } from "../../gateway/test/harness.ts";
import { buildConsole } from "../../scripts/lib/console-build.mjs";
import { axeViolations, go, launchBrowser, openConsole as openTab, signIn } from "./browser-kit.mjs";

const SHOTS = path.join(import.meta.dirname, "..", "..", "test-results", "console");
const JS_BUDGET_BYTES = 150 * 1024;
/** The goal is 1 s (printed with the measured figure); the assertion allows twice that on a busy shared machine. */
const OVERVIEW_GOAL_MS = 1000;
const OVERVIEW_CEILING_MS = 2 * OVERVIEW_GOAL_MS;
const PAGES = [
  "overview",
  "traffic",
  "subusers",
  "requests",
  "sessions",
  "orders",
  "subscriptions",
  "isp",
  "api-keys",
  "webhooks",
  "reports",
  "audit",
];

let stack;
let browser;
let live;
let sandbox;
let consoleUrl;
const figures = {};

before(async () => {
  figures.gzipBytes = (await buildConsole()).gzipBytes;
  stack = await startStack();
  consoleUrl = `${stack.base}/console/`;
  const account = await stack.admin("POST", "/accounts", {
    email: `console-${Date.now()}@example.com`,
    plan: "pro",
    balance_usd: 500,
  });
  live = (await stack.admin("POST", `/accounts/${account.id}/api-keys`, {})).token;
  sandbox = (await stack.admin("POST", `/accounts/${account.id}/api-keys`, { mode: "test" })).token;
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  console.log(
    `console figures: JavaScript ${(figures.gzipBytes / 1024).toFixed(1)} KB gzip (budget 150 KB); ` +
      `overview after sign-in ${figures.signInMs} ms, after navigation ${figures.overviewMs} ms (goal ${OVERVIEW_GOAL_MS} ms)`,
  );
});

/** A fresh tab on this stack's console. */
function openConsole(viewport) {
  return openTab(browser, consoleUrl, viewport);
}

/** The text a Copy button put on the clipboard. */
async function copied(page, label) {
  await page
    .getByRole("button", { name: `Copy ${label}` })
    .first()
    .click();
  return page.evaluate(() => navigator.clipboard.readText());
}

describe("the console", () => {
  it("is served at /console by the worker's static assets with a strict CSP that forbids framing", async () => {
    const response = await fetch(consoleUrl);
    assert.equal(response.status, 200);
    const csp = response.headers.get("content-security-policy");
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(response.headers.get("x-frame-options"), "DENY");
    const html = await response.text();
    assert.doesNotMatch(html, /<script>(?!<\/script>)|<script(?![^>]*src=)[^>]*>[^<]/, "no inline script");
    const script = await fetch(new URL("console.js", consoleUrl));
    assert.equal(script.status, 200);
    assert.match(script.headers.get("content-security-policy"), /frame-ancestors 'none'/);
    const bare = await fetch(`${stack.base}/console`, { redirect: "manual" });
    assert.ok([200, 307, 308].includes(bare.status), `/console answers ${bare.status}`);
  });

  it("keeps its JavaScript within 150 KB gzip", () => {
    assert.ok(figures.gzipBytes <= JS_BUDGET_BYTES, `${figures.gzipBytes} bytes gzip`);
  });

  it("signs in with a live key, shows the overview, quotes then buys bandwidth and the pool bar moves", async () => {
    const { context, page, problems } = await openConsole();
    const started = Date.now();
    await signIn(page, live);
    await page.getByTestId("pool-residential").waitFor();
    figures.signInMs = Date.now() - started;
    assert.match(await page.getByTestId("balance").textContent(), /\$500\.00/);
    assert.match(await page.getByTestId("pool-residential").textContent(), /^0 GB left of 0 GB/);

    await go(page, "orders");
    await page.getByLabel("GB", { exact: true }).fill("10");
    await page.getByRole("button", { name: "Get a quote" }).click();
    const quote = page.getByTestId("quote");
    await quote.waitFor();
    assert.match(await quote.textContent(), /Total \$45\.00.*\$500\.00 → \$455\.00/);
    await page.getByRole("button", { name: /^Buy 10 GB for \$45\.00$/ }).click();
    await page.getByText(/^Bought: order ord_/).waitFor();

    // Navigation to the overview: the figure the console is held to.
    const navigated = Date.now();
    await page.locator('nav a[href="#/overview"]').click();
    await page.getByText(/^10 GB left of 10 GB/).waitFor();
    figures.overviewMs = Date.now() - navigated;
    assert.ok(figures.overviewMs <= OVERVIEW_CEILING_MS, `overview rendered in ${figures.overviewMs} ms`);
    assert.match(await page.getByTestId("balance").textContent(), /\$455\.00/);

    // The month's spend, then against a budget set from the overview.
    assert.match(
      await page.getByTestId("budget").textContent(),
      /^\$45\.00 spent in \d{4}-\d{2} \(UTC\) · no budget set/,
    );
    await page.getByRole("button", { name: "Set a budget" }).click();
    await page.getByRole("dialog").getByLabel("Amount (USD)").fill("60");
    await page.getByRole("dialog").getByRole("button", { name: "Save" }).click();
    await page.getByText(/^\$15\.00 left · alerts at 50, 80, 100 %/).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("creates a sub-user, shows its password once, copies a proxy string and downloads a proxy list the gateway accepts as written", async () => {
    const { context, page, problems } = await openConsole();
    await signIn(page, live);
    await go(page, "subusers");
    await page.getByRole("button", { name: "New sub-user" }).click();
    await page.getByRole("dialog").getByLabel("Label").fill("console-scraper");
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
    const password = await copied(page, "Password");
    assert.match(password, /^[0-9A-Za-z]{16,}$/);
    await page.getByRole("button", { name: "Open console-scraper" }).click();
    await page.locator("h1", { hasText: "console-scraper" }).waitFor();

    await page.getByLabel("Country").fill("de");
    await page.getByLabel("Session", { exact: true }).fill("abc123");
    await page.getByLabel("Session time (min)").fill("15");
    const line = await copied(page, "host:port:user:pass");
    const [host, port, username, pass] = line.split(":");
    assert.equal(`${host}:${port}`, `127.0.0.1:${stack.gatewayPort}`);
    assert.match(username, /^user_[a-z0-9]+-type-res-region-de-session-abc123-sesstime-15$/);
    assert.equal(pass, password, "the password shown at creation is filled in");
    const curl = await copied(page, "curl");
    assert.ok(curl.includes(`-U '${username}:${password}'`));

    // Through the real local gateway, exactly as copied.
    const answer = await proxiedGet(Number(port), { username, password: pass, url: stack.targetUrl });
    assert.equal(answer.status, 200);
    assert.equal(answer.body, "target says hello\n");

    // A list of 5 sticky sessions from the API, saved with the password put in by the console: each line works.
    await page.getByLabel("Lines").fill("5");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download list" }).click(),
    ]);
    assert.equal(download.suggestedFilename(), "console-scraper-residential-de-sticky.txt");
    const lines = readFileSync(await download.path(), "utf8")
      .trim()
      .split("\n");
    assert.equal(lines.length, 5);
    for (const listed of lines) {
      const [listedHost, listedPort, listedUser, listedPass] = listed.split(":");
      assert.equal(`${listedHost}:${listedPort}`, `127.0.0.1:${stack.gatewayPort}`);
      assert.match(listedUser, /^user_[a-z0-9]+-type-res-region-de-session-[a-z0-9]{10}-sesstime-15$/);
      assert.equal(listedPass, password, "the password shown at creation is put in");
      const through = await proxiedGet(Number(listedPort), {
        username: listedUser,
        password: listedPass,
        url: stack.targetUrl,
      });
      assert.equal(through.status, 200);
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("in the sandbox: a banner, test traffic that shows in the chart and the request log, and a session terminated", async () => {
    const { context, page, problems } = await openConsole();
    await signIn(page, sandbox);
    assert.match(await page.getByRole("note").textContent(), /Sandbox/);

    await page.getByRole("button", { name: "Add test credit" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Add credit" }).click();
    await go(page, "orders");
    await page.getByRole("button", { name: "Get a quote" }).click();
    await page.getByRole("button", { name: /^Buy 10 GB/ }).click();
    await page.getByText(/^Bought: order ord_/).waitFor();

    await go(page, "subusers");
    await page.getByRole("button", { name: "New sub-user" }).click();
    await page.getByRole("dialog").getByLabel("Label").fill("sandbox-bot");
    await page.getByRole("dialog").getByRole("button", { name: "Create" }).click();
    await page.getByRole("button", { name: "Open sandbox-bot" }).click();
    await page.locator("h1", { hasText: "sandbox-bot" }).waitFor();
    // The generated string, tested as the gateway would decide it (the password shown at creation is filled in).
    await page.getByRole("button", { name: "Test this string" }).click();
    assert.match(await page.getByTestId("proxy-test").textContent(), /^accepted/);
    await page.getByRole("button", { name: "Generate test traffic" }).click();
    await page.getByLabel("Requests", { exact: true }).fill("300");
    await page.getByRole("dialog").getByRole("button", { name: "Generate", exact: true }).click();
    await page.getByText(/^300 requests .* accepted/).waitFor();
    await page.getByRole("button", { name: "Done" }).click();

    // The request log, then the traffic chart, once ingestion has caught up.
    await go(page, "requests");
    await eventually(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return /^[1-9][\d,]* of /.test(
        (await page
          .getByTestId("request-count")
          .textContent({ timeout: 2000 })
          .catch(() => "")) ?? "",
      );
    });
    await go(page, "traffic");
    const requestsChart = page.getByRole("img", { name: /^Requests: Total [1-9]/ });
    await requestsChart.waitFor({ timeout: 15_000 });
    assert.match(await requestsChart.getAttribute("aria-label"), /Total 300 in all/);
    await page.getByLabel("Stack by").selectOption("subuser");
    await page.getByRole("img", { name: /^Requests: sandbox-bot 300 in all/ }).waitFor();
    await page.getByLabel("Stack by").selectOption("domain");
    await page.getByRole("img", { name: /^Requests: .* in all/ }).waitFor();

    await go(page, "sessions");
    await page.getByRole("button", { name: "Start test session" }).click();
    await page.getByRole("dialog").getByLabel("Search sub-users by label").fill("sandbox");
    await page.getByRole("dialog").getByLabel("sandbox-bot").check();
    await page.getByRole("dialog").getByRole("button", { name: "Start", exact: true }).click();
    // The session shows once the gateway's report of its first request is in.
    const row = page.getByRole("row", { name: /console1/ });
    await eventually(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return row.isVisible();
    });
    await row.getByRole("button", { name: "Terminate" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Terminate" }).click();
    await page.getByRole("row", { name: /console1.*terminated/ }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("creates a read-only key; signed in with it, no page offers a write", async () => {
    const { context, page } = await openConsole();
    await signIn(page, live);
    await go(page, "api-keys");
    await page.getByRole("button", { name: "New key" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name").fill("read only");
    for (const area of ["account", "billing", "subusers", "isp", "traffic", "reports", "webhooks", "api_keys"]) {
      await dialog.locator(`select[name="scope_${area}"]`).selectOption("read");
    }
    await page.getByRole("dialog").getByRole("button", { name: "Create key" }).click();
    const token = await copied(page, "Token");
    assert.match(token, /^live_[0-9A-Za-z]{64}$/);
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("button", { name: "Sign out" }).click();

    await signIn(page, token);
    const writes =
      /^(New|Add|Create|Edit|Delete|Rotate|Revoke|Buy|Get a quote|Terminate|Subscribe|Pause|Cancel|Release|Renew|Remove|Run now|Send test|Retry|Generate)/;
    for (const name of PAGES) {
      await go(page, name);
      const buttons = await page.locator("main button").allTextContents();
      assert.deepEqual(
        buttons.filter((text) => writes.test(text.trim())),
        [],
        `${name} offers a write`,
      );
    }
    await go(page, "subusers");
    await page.getByRole("link", { name: "console-scraper" }).click();
    await page.locator("h1", { hasText: "console-scraper" }).waitFor();
    const buttons = await page.locator("main button").allTextContents();
    assert.deepEqual(
      buttons.filter((text) => writes.test(text.trim())),
      [],
      "the sub-user page offers a write",
    );
    await context.close();
  });

  it("binds a new key to a sub-user found by searching its label (beyond any first page), and the keys list shows the binding", async () => {
    for (let index = 0; index < 25; index++) {
      const made = await v1(stack.base, live, "POST", "/subusers", {
        label: `bulk-${index}`,
        products: ["residential"],
      });
      assert.equal(made.status, 201);
    }
    const target = await v1(stack.base, live, "POST", "/subusers", {
      label: "needle-target",
      products: ["residential"],
    });
    const { context, page, problems } = await openConsole();
    await signIn(page, live);
    await go(page, "api-keys");
    await page.getByRole("button", { name: "New key" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Name").fill("bound one");
    await dialog.getByLabel("Search sub-users by label").fill("needle");
    await dialog.getByLabel("needle-target").check();
    await dialog.getByRole("button", { name: "Create key" }).click();
    const token = await copied(page, "Token");
    await page.getByRole("button", { name: "Done" }).click();
    await page.getByRole("row", { name: new RegExp(`bound one.*${target.body.id}`) }).waitFor();
    const key = await v1(stack.base, token, "GET", "/api-keys/current");
    assert.deepEqual(key.body.subuser_ids, [target.body.id]);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("every list reaches its end: 230 sub-users paged through by keyboard, a picker finds one past the first page, and a reload lands on the same filtered view", async () => {
    const account = await stack.admin("POST", "/accounts", {
      email: `reseller-${Date.now()}@example.com`,
      plan: "pro",
    });
    const token = (await stack.admin("POST", `/accounts/${account.id}/api-keys`, {})).token;
    const labels = Array.from({ length: 230 }, (_, index) => `far-${String(index).padStart(3, "0")}`);
    for (let start = 0; start < labels.length; start += 23) {
      const made = await Promise.all(
        labels
          .slice(start, start + 23)
          .map((label) => v1(stack.base, token, "POST", "/subusers", { label, products: ["residential"] })),
      );
      assert.deepEqual(new Set(made.map((one) => one.status)), new Set([201]));
    }
    const { context, page, problems } = await openConsole();
    await signIn(page, token);
    await go(page, "subusers");
    const status = page.getByTestId("pager-status");
    const next = page.getByRole("button", { name: "Next" });
    const rowLabels = () => page.locator('table a[href^="#/subusers/"]').allTextContents();

    // The API gives no totals: each page says which rows it shows and whether more follow; the last one, how many.
    const seen = [];
    for (const [first, last] of [
      [1, 50],
      [51, 100],
      [101, 150],
      [151, 200],
    ]) {
      await status.filter({ hasText: `Sub-users ${first}–${last} · more follow` }).waitFor();
      seen.push(...(await rowLabels()));
      await next.focus();
      await page.keyboard.press("Enter");
    }
    await status.filter({ hasText: "Sub-users 201–230 of 230" }).waitFor();
    seen.push(...(await rowLabels()));
    assert.deepEqual(seen.toSorted(), labels, "every sub-user, once, across the pages");
    assert.equal(await next.getAttribute("aria-disabled"), "true");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Next", "focus stays on Next");
    assert.deepEqual(await axeViolations(page), [], "sub-users, last page");
    await page.getByRole("button", { name: "Previous" }).click();
    await status.filter({ hasText: "Sub-users 151–200 · more follow" }).waitFor();

    // A filter and a page position, in the address: a reload (the key is forgotten) and a sign-in land on them.
    await page.getByLabel("Search labels").fill("far-1");
    await page.getByLabel("Per page").selectOption("25");
    await status.filter({ hasText: "Sub-users 1–25 · more follow" }).waitFor();
    await next.click();
    await status.filter({ hasText: "Sub-users 26–50 · more follow" }).waitFor();
    const secondPage = await rowLabels();
    assert.ok(secondPage.every((label) => label.startsWith("far-1")));
    assert.match(page.url(), /#\/subusers\?.*label=far-1/);
    await page.reload();
    await signIn(page, token);
    await status.filter({ hasText: "Sub-users 26–50 · more follow" }).waitFor();
    assert.equal(await page.getByLabel("Search labels").inputValue(), "far-1");
    assert.deepEqual(await rowLabels(), secondPage);
    // The cursors of the pages before went with the reload: the way back is to the first page.
    await page.getByRole("button", { name: "First page" }).click();
    await status.filter({ hasText: "Sub-users 1–25 · more follow" }).waitFor();

    // The request log's sub-user picker searches the API: a sub-user far past the first page is found by typing.
    await go(page, "requests");
    await page.getByLabel("Search sub-users by label").fill("far-007");
    await page.getByLabel("far-007").check();
    await page.waitForFunction(() => /subuser=sub_/.test(location.hash));
    assert.deepEqual(await axeViolations(page), [], "request log with the picker");
    await page.reload();
    await signIn(page, token);
    await page.locator("h1", { hasText: "Request log" }).waitFor();
    assert.ok(await page.getByLabel("far-007").isChecked(), "the picked sub-user, named again after the reload");

    // The audit log pages too: every creation above is an entry.
    await go(page, "audit");
    await status.filter({ hasText: "Audit entries 1–50 · more follow" }).waitFor();
    await next.click();
    await status.filter({ hasText: "Audit entries 51–100 · more follow" }).waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("keeps the key in memory only: nothing in storage or cookies, and sign-out or a reload forgets it", async () => {
    const { context, page } = await openConsole();
    await signIn(page, live);
    await go(page, "subusers");
    const stored = await page.evaluate(() => ({
      local: Object.keys(localStorage).length,
      session: Object.keys(sessionStorage).length,
      cookie: document.cookie,
    }));
    assert.deepEqual(stored, { local: 0, session: 0, cookie: "" });
    assert.deepEqual(await context.cookies(), []);
    await page.reload();
    await signIn(page, live);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in with an API key" }).click();
    assert.equal(await page.getByLabel("API key").inputValue(), "");
    await context.close();
  });

  it("with MFA on, a gated action asks for a code: a wrong one is refused with its doc link, a current one passes", async () => {
    const account = await stack.admin("POST", "/accounts", { email: `mfa-${Date.now()}@example.com`, plan: "pro" });
    const token = (await stack.admin("POST", `/accounts/${account.id}/api-keys`, {})).token;
    const enrollment = await v1(stack.base, token, "POST", "/users/me/security/mfa", { method: "totp" });
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(enrollment.body.secret), digits: 6, period: 30 });
    const verified = await v1(stack.base, token, "POST", "/users/me/security/mfa/verify", { code: totp.generate() });
    assert.equal(verified.status, 200);

    const { context, page } = await openConsole();
    await signIn(page, token);
    await go(page, "api-keys");
    await page.getByRole("button", { name: "New key" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("MFA code").fill("000000");
    await dialog.getByRole("button", { name: "Create key" }).click();
    const refusal = dialog.getByRole("alert");
    await refusal.waitFor();
    assert.match(await refusal.textContent(), /mfa_required · HTTP 403/);
    assert.match(await refusal.getByRole("link").getAttribute("href"), /#mfa_required$/);
    // The verification used this time step's code; the API accepts the next step's (one step of clock drift).
    await dialog.getByLabel("MFA code").fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await dialog.getByRole("button", { name: "Create key" }).click();
    assert.match(await copied(page, "Token"), /^live_[0-9A-Za-z]{64}$/);
    await context.close();
  });

  it("shows an API error with its message and a link to its doc_url", async () => {
    const { context, page } = await openConsole();
    await page.getByRole("button", { name: "Sign in with an API key" }).click();
    await page.getByLabel("API key").fill(`live_${"0".repeat(64)}`);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    assert.match(await alert.textContent(), /unauthorized · HTTP 401/);
    assert.match(
      await alert.getByRole("link", { name: "What this means" }).getAttribute("href"),
      /\/docs\/errors#unauthorized$/,
    );
    await context.close();
  });

  it("the traffic page: failures per status and gateway code exactly as the API sums them, in at most 5 calls", async () => {
    const { body: failing } = await v1(stack.base, sandbox, "POST", "/subusers", {
      label: "failing-bot",
      products: ["residential"],
    });
    const generated = await v1(stack.base, sandbox, "POST", "/test-helpers/traffic", {
      subuser: failing.id,
      product: "residential",
      requests: 400,
      error_rate: 0.3,
      regions: ["us"],
    });
    assert.equal(generated.status, 202, JSON.stringify(generated.body));
    const { context, page, problems } = await openConsole();
    await signIn(page, sandbox);
    // The page signed in to (the overview) finishes its own calls before the traffic page's are counted.
    await page.waitForLoadState("networkidle");
    const calls = [];
    page.on("request", (request) => {
      const { pathname } = new URL(request.url());
      if (pathname.startsWith("/v1/")) calls.push(pathname);
    });
    await go(page, "traffic");
    const statuses = page.locator("section", { hasText: "Failed requests by status" });
    await statuses.getByText("HTTP 502").waitFor();
    const to = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
    const from = new Date(to.getTime() - 24 * 3_600_000);
    const window = `from=${from.toISOString()}&to=${to.toISOString()}`;
    for (const [groupBy, name] of [
      ["status", (row) => `HTTP ${row.status}`],
      ["error_code", (row) => row.error_code],
    ]) {
      const { body } = await v1(stack.base, sandbox, "GET", `/residential/traffic?${window}&group_by=${groupBy}`);
      const failed = body.rows.filter((row) => row.errors > 0);
      assert.ok(failed.length > 0, groupBy);
      const section = page.locator("section", { hasText: groupBy === "status" ? "by status" : "by gateway code" });
      for (const row of failed) {
        await section.getByText(`${row.errors.toLocaleString("en-US")} requests`).waitFor();
        assert.ok((await section.textContent()).includes(name(row)), `${groupBy} ${name(row)}`);
      }
    }
    assert.ok(calls.length <= 5, `${calls.length} API calls: ${calls.join(", ")}`);
    assert.deepEqual(await axeViolations(page), [], "traffic");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("the request log's Live toggle puts a request on top as the gateway reports it", async () => {
    const { context, page, problems } = await openConsole();
    await v1(stack.base, live, "POST", "/orders", { product: "residential", gb: 1 });
    const { body: watched } = await v1(stack.base, live, "POST", "/subusers", {
      label: "live-watched",
      products: ["residential"],
    });
    await signIn(page, live);
    await go(page, "requests");
    await page.getByLabel("Search sub-users by label").fill("live-watched");
    await page.getByLabel("live-watched").check();
    await page.getByLabel("Live", { exact: true }).check();
    await page.getByTestId("live-status").filter({ hasText: "Live: waiting for requests" }).waitFor();

    const answer = await proxiedGet(stack.gatewayPort, {
      username: `user_${watched.name}-type-res-region-us`,
      password: watched.password,
      url: stack.targetUrl,
    });
    assert.equal(answer.status, 200);
    // The gateway reports within its flush interval; the tail shows it without a refresh.
    await page.getByTestId("live-status").filter({ hasText: "Live: 1 new" }).waitFor({ timeout: 5000 });
    const first = page.getByRole("row").nth(1);
    assert.match(await first.textContent(), /live-watched.*GET 127\.0\.0\.1.*200/);
    await page.getByLabel("Live", { exact: true }).uncheck();
    await page.getByTestId("live-status").waitFor({ state: "detached" });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("a reseller's controls: target rules the gateway enforces as saved, day and lifetime caps, an expiry", async () => {
    const { context, page, problems } = await openConsole();
    await v1(stack.base, live, "POST", "/orders", { product: "residential", gb: 1 });
    const { body: sold } = await v1(stack.base, live, "POST", "/subusers", {
      label: "resold",
      products: ["residential"],
    });
    await signIn(page, live);
    await page.goto(`${consoleUrl}#/subusers/${sold.id}`);
    await page.locator("h1", { hasText: "resold" }).waitFor();

    await page.getByRole("button", { name: "Edit rules" }).click();
    const rules = page.getByRole("dialog");
    await rules.getByLabel("Requests may reach").selectOption("deny");
    await rules.getByLabel("Domains").fill("Blocked.test\n\nshop.blocked.test");
    await rules.getByLabel("IP ranges").fill("127.0.0.0/8");
    await rules.getByRole("button", { name: "Save rules" }).click();
    await page.getByText("Every destination but these is reachable:").waitFor();
    assert.deepEqual(await page.locator("section", { hasText: "Target rules" }).locator("li code").allTextContents(), [
      "blocked.test",
      "shop.blocked.test",
      "127.0.0.0/8",
    ]);
    const refused = await proxiedGet(stack.gatewayPort, {
      username: `user_${sold.name}-type-res-region-us`,
      password: sold.password,
      url: stack.targetUrl,
    });
    assert.deepEqual([refused.status, refused.headers["x-service-error-code"]], [403, "target-denied"]);

    await page.getByRole("button", { name: "Edit", exact: true }).click();
    const edit = page.getByRole("dialog");
    await edit.getByLabel("Daily traffic cap (GB)").fill("2.5");
    await edit.getByLabel("Lifetime traffic cap (GB)").fill("100");
    await edit.getByLabel("Expires on").fill("2031-01-01");
    await edit.getByRole("button", { name: "Save" }).click();
    await page.getByText("2.5 GB a day (UTC)").waitFor();
    const { body: saved } = await v1(stack.base, live, "GET", `/subusers/${sold.id}`);
    assert.deepEqual(
      [saved.daily_limit_gb, saved.lifetime_limit_gb, saved.expires_at],
      [2.5, 100, "2031-01-01T00:00:00.000Z"],
    );
    assert.deepEqual(await axeViolations(page), [], "sub-user with controls");
    assert.deepEqual(problems, []);
    await context.close();
  });

  for (const [label, viewport] of [
    ["desktop", { width: 1280, height: 900 }],
    ["375px", { width: 375, height: 812 }],
  ]) {
    it(`every page has no serious or critical axe violation, and is screenshotted (${label})`, async () => {
      const { context, page, problems } = await openConsole(viewport);
      await page.screenshot({ path: path.join(SHOTS, `${label}-sign-in.png`), fullPage: true });
      assert.deepEqual(await axeViolations(page), [], "sign-in");
      await signIn(page, sandbox);
      for (const name of PAGES) {
        if (viewport.width < 700) await page.getByRole("button", { name: "Menu" }).click();
        await go(page, name);
        await page.waitForTimeout(300);
        await page.screenshot({ path: path.join(SHOTS, `${label}-${name}.png`), fullPage: true });
        assert.deepEqual(await axeViolations(page), [], name);
      }
      // A sub-user's own page: details, proxy-string generator, usage, sources and whitelist.
      if (viewport.width < 700) await page.getByRole("button", { name: "Menu" }).click();
      await go(page, "subusers");
      await page.getByRole("link", { name: "sandbox-bot" }).click();
      await page.locator("h1", { hasText: "sandbox-bot" }).waitFor();
      await page.getByRole("img", { name: /^Requests: Requests [1-9]/ }).waitFor();
      await page.screenshot({ path: path.join(SHOTS, `${label}-subuser.png`), fullPage: true });
      assert.deepEqual(await axeViolations(page), [], "sub-user");
      assert.deepEqual(problems, []);
      await context.close();
    });
  }
});

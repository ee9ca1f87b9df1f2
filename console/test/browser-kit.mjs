// What every browser test of the console does: Chromium (Debian's, through playwright-core) kept offline but for
// this machine, the sign-in with a key or as a member, moving between pages, and axe-core's serious and critical
// violations.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";

const require = createRequire(import.meta.url);
const CHROMIUM = "/usr/bin/chromium";
const AXE_SOURCE = readFileSync(require.resolve("axe-core"), "utf8");

export const PAGE_TITLES = {
  overview: "Overview",
  traffic: "Traffic",
  subusers: "Sub-users",
  requests: "Request log",
  sessions: "Sessions",
  orders: "Orders",
  subscriptions: "Subscriptions",
  isp: "ISP batches",
  "api-keys": "API keys",
  webhooks: "Webhooks",
  reports: "Reports",
  audit: "Audit log",
  members: "Members",
  invitations: "Invitations",
  "my-sessions": "My sessions",
  "connected-apps": "Connected applications",
  security: "Security",
};

export function launchBrowser() {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does it)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
}

/**
 * A fresh tab (its own memory, storage and cookies) on the console at `consoleUrl`, offline but for this machine,
 * clipboard allowed. `problems` collects page errors and CSP refusals.
 */
export async function openConsole(browser, consoleUrl, { width = 1280, height = 900 } = {}) {
  const context = await browser.newContext({ viewport: { width, height } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(consoleUrl).origin });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy|Refused/.test(message.text()))
      problems.push(message.text());
  });
  await page.route("**/*", (route) => {
    const { hostname } = new URL(route.request().url());
    return hostname === "127.0.0.1" || hostname === "localhost" ? route.continue() : route.abort();
  });
  await page.goto(consoleUrl);
  return { context, page, problems };
}

export async function signIn(page, token) {
  await page.getByRole("button", { name: "Sign in with an API key" }).click();
  await page.getByLabel("API key").fill(token);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
}

/** A member's sign-in with email and password (the sign-in's first form). */
export async function signInAsMember(page, email, password) {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
}

/**
 * Chromium's virtual authenticator in this tab (through the DevTools protocol): a platform authenticator holding
 * discoverable credentials, which verifies its user at once, so passkey ceremonies complete without a prompt.
 * WebAuthn refuses an IP address as relying party: such a tab opens the console at `localhost`.
 */
export async function virtualAuthenticator(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
    options: {
      protocol: "ctap2",
      transport: "internal",
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  return {
    /** The credentials it holds. */
    credentials: async () => (await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials,
  };
}

/**
 * An application connected by the signed-in member of `page` (at `base`, the console's origin): an OAuth client
 * registered as `name`, its consent allowed in the tab with the first scope offered. The tab stays on the consent
 * page.
 */
export async function connectApplication(page, base, name) {
  // Never reached: the consent's redirect is not followed.
  const redirect = "http://127.0.0.1:59999/callback";
  const registered = await fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirect], token_endpoint_auth_method: "none" }),
  });
  assert.equal(registered.status, 201, await registered.clone().text());
  const { client_id } = await registered.json();
  const verifier = randomBytes(32).toString("base64url");
  const url = new URL(`${base}/oauth/authorize`);
  for (const [key, value] of Object.entries({
    response_type: "code",
    client_id,
    redirect_uri: redirect,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  }))
    url.searchParams.set(key, value);
  await page.goto(url.href);
  await page.locator('input[name="scope"]').first().check();
  // Allow, sent as the form sends it with the tab's cookie (the page's CSP lets no script fetch), the redirect to the
  // client not followed.
  const form = await page.evaluate(() => {
    const allow = document.querySelector('button[value="approve"]');
    return { action: allow.form.action, fields: [...new FormData(allow.form, allow)] };
  });
  const cookie = (await page.context().cookies(base)).map((one) => `${one.name}=${one.value}`).join("; ");
  const allowed = await fetch(form.action, {
    method: "POST",
    headers: { Cookie: cookie, Origin: base, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form.fields).toString(),
    redirect: "manual",
  });
  assert.equal(allowed.status, 302, await allowed.text());
  assert.ok(allowed.headers.get("Location")?.startsWith(`${redirect}?code=`), allowed.headers.get("Location"));
}

/** Through the navigation to a page, until it has loaded. */
export async function go(page, name) {
  await page.locator(`nav a[href="#/${name}"]`).click();
  await page.locator("h1", { hasText: PAGE_TITLES[name] }).waitFor();
  await page.waitForFunction(() => !document.querySelector('[role="status"]')?.textContent?.startsWith("Loading"));
}

/** As `go`, at any width: at 375 px the menu is folded into its toggle, opened first. */
export async function visit(page, name) {
  if (!(await page.locator(`nav a[href="#/${name}"]`).isVisible())) {
    await page.getByRole("button", { name: "Menu" }).click();
  }
  await go(page, name);
}

/** Serious and critical violations, one line each. */
export async function axeViolations(page) {
  // Evaluated through the DevTools protocol: a <script> tag would be refused by the console's own CSP.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(() => window.axe.run());
  return result.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
}

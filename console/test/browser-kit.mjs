// What every browser test of the console does: Chromium (Debian's, through playwright-core) kept offline but for
// this machine, the sign-in with a key or as a member, moving between pages, and axe-core's serious and critical
// violations.
import assert from "node:assert/strict";
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
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** A member's sign-in with email and password (the sign-in's first form). */
export async function signInAsMember(page, email, password) {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

/** Through the navigation to a page, until it has loaded. */
export async function go(page, name) {
  await page.locator(`nav a[href="#/${name}"]`).click();
  await page.locator("h1", { hasText: PAGE_TITLES[name] }).waitFor();
  await page.waitForFunction(() => !document.querySelector('[role="status"]')?.textContent?.startsWith("Loading"));
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

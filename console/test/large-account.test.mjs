// The console on a reseller's account at scale, in Chromium, against a running `npm run dev` seeded by
// `npm run seed:large` (5,000 sub-users, 20,000 orders, 10,000 sessions, 90 days of traffic):
//
//   npm run dev                      # one terminal
//   npm run seed:large               # another; sessions live 30 minutes: run it again (it adds only new sessions)
//                                    # when more than 20 minutes have passed
//   npm run test:console:large       # CONSOLE_BASE (default http://localhost:8787) and STATE_DIR (default .wrangler)
//
// Every list is paged to its end and compared with the API's own walk; the sub-user picker finds the last sub-user
// by typing; the traffic page's failure breakdown is compared with the API's exact counts; axe on each page. It
// also times what a reseller waits for (the traffic page's first chart after navigation, each page of sub-users)
// and keeps the figures in bench/results/console-large-<time>.json.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { axeViolations, go, launchBrowser, openConsole, signIn } from "./browser-kit.mjs";

const root = path.join(import.meta.dirname, "..", "..");
const BASE = process.env.CONSOLE_BASE ?? "http://localhost:8787";
const STATE_FILE = path.join(process.env.STATE_DIR ?? path.join(root, ".wrangler"), "reseller-account.json");
const GOALS = { trafficFirstChartMs: 1500, trafficCalls: 5, subusersPageMs: 500 };
const SEEDED = { subusers: 5000, orders: 20000, sessions: 10000 };
const PAGE_SIZE = "200";

let browser;
let token;
const figures = { base: BASE, goals: GOALS };

before(async () => {
  assert.ok(existsSync(STATE_FILE), `${STATE_FILE} is missing: run npm run dev, then npm run seed:large`);
  token = JSON.parse(readFileSync(STATE_FILE, "utf8")).token;
  const me = await fetch(`${BASE}/v1/users/me`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(me.status, 200, `the seeded key does not sign in at ${BASE}: is npm run dev running?`);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `console-large-${new Date().toISOString().replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`console on the large account: ${JSON.stringify(figures)}\n(${path.relative(root, file)})`);
});

/** Every item's `field` of a list through the API's own cursor, 100 a call. */
async function walk(listPath, field = "id") {
  const ids = [];
  for (let cursor = null; ; ) {
    const separator = listPath.includes("?") ? "&" : "?";
    const url = `${BASE}/v1${listPath}${separator}limit=100${cursor ? `&cursor=${cursor}` : ""}`;
    const page = await (await fetch(url, { headers: { Authorization: `Bearer ${token}` } })).json();
    ids.push(...page.data.map((item) => item[field]));
    cursor = page.next_cursor;
    if (!cursor) return ids;
  }
}

/**
 * Pages a list to its end with Next (200 a page), timing each move from the click to the new rows; returns the
 * rows' keys (`rowKeys` reads them off the page) and the page times.
 */
async function pageThrough(page, noun, rowKeys) {
  await page.getByLabel("Per page").selectOption(PAGE_SIZE);
  const status = page.getByTestId("pager-status");
  await status.filter({ hasText: `${noun} 1–${PAGE_SIZE}` }).waitFor();
  await page.waitForFunction(() => !document.querySelector("[aria-busy='true']"));
  const keys = [...(await rowKeys())];
  const times = [];
  const next = page.getByRole("button", { name: "Next" });
  while ((await next.getAttribute("aria-disabled")) !== "true") {
    const before = await status.textContent();
    const ms = await page.evaluate(
      (previous) =>
        new Promise((resolve) => {
          const started = performance.now();
          const status = () => document.querySelector('[data-testid="pager-status"]')?.textContent;
          const observer = new MutationObserver(() => {
            const now = status();
            if (now && now !== previous && !document.querySelector("[aria-busy='true']")) {
              observer.disconnect();
              requestAnimationFrame(() => resolve(performance.now() - started));
            }
          });
          observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
          [...document.querySelectorAll("nav.pager button")].find((button) => button.textContent === "Next").click();
        }),
      before,
    );
    times.push(ms);
    keys.push(...(await rowKeys()));
  }
  return { keys, times, last: await status.textContent() };
}

function quantiles(times) {
  const sorted = times.toSorted((a, b) => a - b);
  const at = (q) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  return { pages: times.length, p50Ms: at(0.5), p95Ms: at(0.95), maxMs: at(1) };
}

/** Navigates in the page (as a click on the menu does) and resolves when the first chart's canvas is drawn. */
function timeFirstChart(page, hash) {
  return page.evaluate(
    (target) =>
      new Promise((resolve) => {
        const started = performance.now();
        // The traffic page's own chart: the page before it may have had one.
        const drawn = () =>
          document.querySelector("h1")?.textContent === "Traffic" && document.querySelector("figure.chart canvas");
        const observer = new MutationObserver(() => {
          if (!drawn()) return;
          observer.disconnect();
          requestAnimationFrame(() => resolve(performance.now() - started));
        });
        observer.observe(document.body, { childList: true, subtree: true });
        location.hash = target;
      }),
    hash,
  );
}

describe("the console on a reseller's account at scale", () => {
  it("the sub-users page reaches the last of 5,000 sub-users, each page within 500 ms", async () => {
    const expected = await walk("/subusers");
    assert.ok(expected.length >= SEEDED.subusers, `${expected.length} sub-users: seed with npm run seed:large`);
    const { context, page, problems } = await openConsole(browser, `${BASE}/console/`);
    await signIn(page, token);
    await go(page, "subusers");
    const ids = () =>
      page
        .locator('table a[href^="#/subusers/"]')
        .evaluateAll((links) => links.map((link) => link.getAttribute("href").split("/").pop()));
    const { keys, times, last } = await pageThrough(page, "Sub-users", ids);
    assert.deepEqual(keys, expected, "every sub-user once, in the API's order, to the last");
    assert.match(last, new RegExp(`of ${expected.length.toLocaleString("en-US")}$`));
    figures.subusersPage = quantiles(times);
    assert.deepEqual(await axeViolations(page), [], "sub-users, last page");
    assert.ok(
      figures.subusersPage.p95Ms <= GOALS.subusersPageMs,
      `sub-users page p95 ${figures.subusersPage.p95Ms} ms (goal ${GOALS.subusersPageMs} ms)`,
    );
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("the orders page reaches the oldest of 20,000 orders", async () => {
    const expected = await walk("/orders");
    assert.ok(expected.length >= SEEDED.orders, `${expected.length} orders`);
    const { context, page, problems } = await openConsole(browser, `${BASE}/console/`);
    await signIn(page, token);
    await go(page, "orders");
    const ids = () => page.locator("table tbody tr td:nth-child(2) code").allTextContents();
    const { keys, times } = await pageThrough(page, "Orders", ids);
    assert.deepEqual(keys, expected, "every order once, newest first, to the oldest");
    figures.ordersPage = quantiles(times);
    assert.deepEqual(await axeViolations(page), [], "orders, last page");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("the sessions page reaches the last of 10,000 live sessions, and its picker finds sub-user 4,999 by typing", async () => {
    const expected = await walk("/residential/sessions", "session_id");
    assert.ok(expected.length >= SEEDED.sessions, `${expected.length} sessions: they live 30 minutes after seeding`);
    const { context, page, problems } = await openConsole(browser, `${BASE}/console/`);
    await signIn(page, token);
    await go(page, "sessions");
    const ids = () => page.locator("table tbody tr td:first-child code").allTextContents();
    const { keys, times } = await pageThrough(page, "Sessions", ids);
    // Listed by the live index, in no order a page could rely on: every session once, to the last.
    assert.deepEqual(keys.toSorted(), expected.toSorted(), "every live session once");
    figures.sessionsPage = quantiles(times);

    await page.getByLabel("Search sub-users by label").fill("customer-4999");
    await page.getByLabel("customer-4999").check();
    await page.waitForFunction(() => /subuser=sub_/.test(location.hash));
    const subuser = new URLSearchParams(page.url().split("?")[1]).get("subuser");
    const own = await walk(`/residential/sessions?subuser=${subuser}`, "session_id");
    assert.ok(own.length > 0 && own.length <= Number(PAGE_SIZE), `sub-user 4,999 has ${own.length} sessions`);
    const count = own.length.toLocaleString("en-US");
    await page
      .getByTestId("pager-status")
      .filter({ hasText: `Sessions 1–${count} of ${count}` })
      .waitFor();
    assert.deepEqual(await ids(), own, "its sessions, as the API lists them");
    assert.deepEqual(await axeViolations(page), [], "sessions, picked sub-user");
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("the traffic page: first chart within 1.5 s of navigation, at most 5 calls, failures exactly as the API counts them", async () => {
    const { context, page, problems } = await openConsole(browser, `${BASE}/console/`);
    await signIn(page, token);
    const calls = [];
    page.on("request", (request) => {
      const { pathname, search } = new URL(request.url());
      if (pathname.startsWith("/v1/")) calls.push(`${pathname}${search}`);
    });
    figures.traffic = {};
    for (const [view, hash] of [
      ["24h", "#/traffic"],
      ["90d", "#/traffic?range=90d"],
    ]) {
      await go(page, "overview");
      calls.length = 0;
      const firstChartMs = Math.round(await timeFirstChart(page, hash));
      await page.waitForFunction(() => !document.querySelector('[role="status"]')?.textContent?.startsWith("Loading"));
      await page
        .locator("section", { hasText: "Failed requests by gateway code" })
        .getByText(/requests/)
        .first()
        .waitFor();
      figures.traffic[view] = { firstChartMs, calls: calls.length };
      assert.ok(calls.length <= GOALS.trafficCalls, `${view}: ${calls.length} API calls: ${calls.join(", ")}`);
      assert.ok(firstChartMs <= GOALS.trafficFirstChartMs, `${view}: first chart after ${firstChartMs} ms`);
    }

    // The 90-day view's failures, against the API's exact sums over the same range (the page's own calls).
    const statusCall = calls.find((call) => call.includes("group_by=status"));
    const window = new URLSearchParams(statusCall.split("?")[1]);
    const days = (Date.parse(window.get("to")) - Date.parse(window.get("from"))) / 86_400_000;
    assert.ok(days >= 89, `the 90-day view asked ${days} days`);
    for (const [groupBy, title, name] of [
      ["status", "by status", (row) => `HTTP ${row.status ?? "(not recorded)"}`],
      ["error_code", "by gateway code", (row) => row.error_code ?? "(none)"],
    ]) {
      const query = `from=${window.get("from")}&to=${window.get("to")}&group_by=${groupBy}`;
      const answer = await fetch(`${BASE}/v1/residential/traffic?${query}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const failed = (await answer.json()).rows.filter((row) => row.errors > 0);
      assert.ok(failed.length > 0, `the seeding has failures by ${groupBy}`);
      const section = page.locator("section", { hasText: `Failed requests ${title}` });
      for (const row of failed) {
        const bar = section.getByRole("meter", { name: name(row), exact: true });
        assert.equal(await bar.getAttribute("aria-valuetext"), `${row.errors.toLocaleString("en-US")} requests`);
      }
    }
    assert.deepEqual(await axeViolations(page), [], "traffic, 90 days");
    assert.deepEqual(problems, []);
    await context.close();
  });
});

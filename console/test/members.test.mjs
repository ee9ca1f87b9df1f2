// A team in the console, in Chromium against `wrangler dev`: an owner invites a viewer by email, the mail is read
// from the worker's local outbox, the viewer accepts, signs in with email and password on a session cookie, stays
// signed in across a reload, can change nothing (no write controls; the API refuses a write sent with its cookie
// and CSRF token), and signing out everywhere sends its other browser back to sign-in. axe and screenshots of the
// new pages at desktop width and 375 px.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startStack } from "../../gateway/test/harness.ts";
import { buildConsole } from "../../scripts/lib/console-build.mjs";
import { axeViolations, go, launchBrowser, openConsole as openTab, signInAsMember } from "./browser-kit.mjs";

const SHOTS = path.join(import.meta.dirname, "..", "..", "test-results", "console");
const OWNER = { email: `owner-${Date.now()}@example.com`, password: "owner correct horse battery" };
const VIEWER = {
  email: `viewer-${Date.now()}@example.com`,
  password: "viewer correct horse battery",
  name: "Vera Viewer",
};
/** What would change the account: no such button for a viewer (its own sign-out, sessions and security are its own). */
const WRITES =
  /^(New|Add|Create|Edit|Delete|Rotate|Buy|Get a quote|Terminate|Subscribe|Pause|Cancel|Release|Renew|Remove|Run now|Send test|Retry|Generate|Invite|Change role|Withdraw)/;

let stack;
let browser;
let accountId;
let consoleUrl;

before(async () => {
  await buildConsole();
  stack = await startStack();
  consoleUrl = `${stack.base}/console/`;
  const account = await stack.admin("POST", "/accounts", { email: OWNER.email, plan: "pro", balance_usd: 50 });
  await stack.admin("POST", `/accounts/${account.id}/members`, { ...OWNER, name: "Olga Owner" });
  accountId = account.id;
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

function openConsole(viewport, url = consoleUrl) {
  return openTab(browser, url, viewport);
}

/** The link's token of the newest mail to `to`, once the outbox has it. */
async function mailedLink(to) {
  const mail = await stack.lastMailTo(to);
  assert.ok(mail, `no mail to ${to}`);
  const link = /https?:\/\/\S+#\/[a-z-]+\?token=[0-9A-Za-z]+/.exec(mail.text)?.[0];
  assert.ok(link, mail.text);
  return link;
}

describe("members in the console", () => {
  it("invite → accept → sign in → a reload stays signed in → a viewer changes nothing → sign out everywhere", async () => {
    // The owner invites a viewer.
    const owner = await openConsole();
    await signInAsMember(owner.page, OWNER.email, OWNER.password);
    await go(owner.page, "members");
    await owner.page.getByRole("button", { name: "Invite a person" }).click();
    const dialog = owner.page.getByRole("dialog");
    await dialog.getByLabel("Email").fill(VIEWER.email);
    await dialog.getByLabel("Role").selectOption("viewer");
    await dialog.getByRole("button", { name: "Send the invitation" }).click();
    await dialog.waitFor({ state: "hidden" });
    await go(owner.page, "invitations");
    const row = owner.page.getByRole("row", { name: new RegExp(VIEWER.email) });
    assert.match(await row.textContent(), /viewer.*pending/);

    // The mailed link opens the console's page for it: a name and a password.
    const link = await mailedLink(VIEWER.email);
    assert.ok(link.startsWith(`${consoleUrl}#/accept-invitation?token=`), link);
    const viewer = await openConsole(undefined, link);
    await viewer.page.getByLabel("Your name").fill(VIEWER.name);
    await viewer.page.getByLabel("Password").fill(VIEWER.password);
    await viewer.page.getByRole("button", { name: "Join the account" }).click();
    await viewer.page.getByText(/You are a member now/).waitFor();
    await viewer.page.getByRole("link", { name: "Go to sign-in" }).click();
    await signInAsMember(viewer.page, VIEWER.email, VIEWER.password);
    assert.match(await viewer.page.locator(".topbar .who").textContent(), /Vera Viewer · viewer/);

    // The session lives in an HttpOnly cookie: no script sees it, nothing is in storage; a reload stays signed in.
    const stored = await viewer.page.evaluate(() => ({
      local: Object.keys(localStorage).length,
      session: Object.keys(sessionStorage).length,
      cookie: document.cookie,
    }));
    assert.deepEqual(stored, { local: 0, session: 0, cookie: "" });
    const [cookie] = await viewer.context.cookies();
    assert.equal(cookie?.name, "__Host-session");
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.secure, true);
    await viewer.page.reload();
    await viewer.page.getByRole("button", { name: "Sign out" }).waitFor();

    // A viewer sees every page it may read, and no control that would change the account.
    const pages = await viewer.page.locator("nav a").evaluateAll((links) => links.map((a) => a.hash.slice(2)));
    assert.ok(pages.includes("members") && pages.includes("invitations") && pages.includes("my-sessions"), pages);
    // (Its Security page is its own too: its sign-in's second factor, passkeys and password.)
    for (const name of pages.filter((one) => one !== "security")) {
      await viewer.page.locator(`nav a[href="#/${name}"]`).click();
      await viewer.page.locator("h1#page-title").waitFor();
      await viewer.page.waitForFunction(
        () => !document.querySelector('[role="status"]')?.textContent?.startsWith("Loading"),
      );
      const buttons = await viewer.page.locator("main button").allTextContents();
      assert.deepEqual(
        buttons.filter((text) => WRITES.test(text.trim())),
        [],
        `${name} offers a write`,
      );
    }
    // The API refuses a write sent with the viewer's own cookie and CSRF token.
    const refused = await viewer.page.evaluate(async () => {
      const { csrf_token } = await (await fetch("/v1/auth/session")).json();
      const response = await fetch("/v1/invitations", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf_token },
        body: JSON.stringify({ email: "sneaky@example.com", role: "owner" }),
      });
      return { status: response.status, code: (await response.json()).code };
    });
    assert.deepEqual(refused, { status: 403, code: "insufficient_scope" });

    // A second browser of the viewer; signing out everywhere from the first sends it back to sign-in.
    const other = await openConsole();
    await signInAsMember(other.page, VIEWER.email, VIEWER.password);
    // (The viewer's tab was on its sessions already: it reads them again from another page.)
    await go(viewer.page, "members");
    await go(viewer.page, "my-sessions");
    const sessions = viewer.page.getByRole("region", { name: "My sessions" }).locator("tbody tr");
    assert.equal(await sessions.count(), 2, (await sessions.allTextContents()).join("\n"));
    assert.equal(await viewer.page.getByText("this session").count(), 1);
    await viewer.page.screenshot({ path: path.join(SHOTS, "desktop-my-sessions-viewer.png"), fullPage: true });
    await viewer.page.getByRole("button", { name: "Sign out everywhere" }).click();
    await viewer.page.getByRole("dialog").getByRole("button", { name: "Sign out everywhere" }).click();
    await viewer.page.getByText(/Signed out everywhere/).waitFor();
    await other.page.locator('nav a[href="#/members"]').click();
    await other.page.getByText(/Your session has ended/).waitFor();
    await other.page.getByLabel("Email").waitFor();
    await other.page.reload();
    await other.page.getByLabel("Email").waitFor();
    assert.equal(await other.page.getByRole("button", { name: "Sign out" }).count(), 0);

    for (const tab of [owner, viewer, other]) assert.deepEqual(tab.problems, []);
    await Promise.all([owner.context.close(), viewer.context.close(), other.context.close()]);
  });

  it("the invite dialog offers an admin only the roles an admin may give: developer and viewer", async () => {
    const admin = { email: `admin-${Date.now()}@example.com`, password: "admin correct horse battery" };
    await stack.admin("POST", `/accounts/${accountId}/members`, { ...admin, name: "Adam Admin", role: "admin" });
    const { context, page, problems } = await openConsole();
    await signInAsMember(page, admin.email, admin.password);
    await go(page, "members");
    await page.getByRole("button", { name: "Invite a person" }).click();
    const select = page.getByRole("dialog").getByLabel("Role");
    await select.waitFor();
    const roles = await select.locator("option").evaluateAll((options) => options.map((option) => option.value));
    assert.deepEqual(roles.sort(), ["developer", "viewer"]);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("a forgotten password: the mailed link sets a new one, and the old one no longer signs in", async () => {
    const { context, page, problems } = await openConsole();
    await page.getByRole("button", { name: "Forgot your password?" }).click();
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByRole("button", { name: "Mail me a link" }).click();
    await page.getByText(/a link to choose a new password is on its way/).waitFor();
    await page.goto(await mailedLink(OWNER.email));
    await page.getByLabel("Password").fill("a brand new correct horse");
    await page.getByRole("button", { name: "Set the password" }).click();
    await page.getByText(/Your password is changed/).waitFor();
    await page.getByRole("link", { name: "Go to sign-in" }).click();
    await page.getByLabel("Email").fill(OWNER.email);
    await page.getByLabel("Password").fill(OWNER.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByText(/invalid_credentials/).waitFor();
    OWNER.password = "a brand new correct horse";
    await signInAsMember(page, OWNER.email, OWNER.password);
    assert.deepEqual(problems, []);
    await context.close();
  });

  for (const [label, viewport] of [
    ["desktop", { width: 1280, height: 900 }],
    ["mobile", { width: 375, height: 812 }],
  ]) {
    it(`the new pages have no serious or critical axe violation, and are screenshotted (${label})`, async () => {
      const { context, page, problems } = await openConsole(viewport);
      const shoot = async (name) => {
        await page.screenshot({ path: path.join(SHOTS, `${label}-${name}.png`), fullPage: true });
        assert.deepEqual(await axeViolations(page), [], name);
      };
      await page.getByLabel("Email").waitFor();
      await shoot("sign-in-member");
      await page.getByRole("button", { name: "Forgot your password?" }).click();
      await shoot("forgot-password");
      await page.goto(`${consoleUrl}#/accept-invitation?token=example`);
      await page.getByLabel("Your name").waitFor();
      await shoot("accept-invitation");
      await page.goto(`${consoleUrl}#/reset-password?token=example`);
      await page.getByLabel("Password").waitFor();
      await shoot("reset-password");
      await page.goto(consoleUrl);
      await signInAsMember(page, OWNER.email, OWNER.password);
      // At 375 px the menu folds into its toggle.
      const visit = async (name) => {
        if (label === "mobile") await page.getByRole("button", { name: "Menu" }).click();
        await go(page, name);
      };
      for (const name of ["members", "invitations", "my-sessions"]) {
        await visit(name);
        await shoot(name);
      }
      await visit("members");
      await page.getByRole("button", { name: "Invite a person" }).click();
      await shoot("invite-dialog");
      assert.deepEqual(problems, []);
      await context.close();
    });
  }
});

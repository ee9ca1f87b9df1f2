// A member's own security in the console, in Chromium against `wrangler dev`: two-step verification set up on the
// Security page and then asked at sign-in (a wrong code refused, the right one signing in, turned off again); a
// session revoked from another browser sending the console back to sign-in with a note; passkeys added and removed
// with Chromium's virtual authenticator, and signing in with one (no password typed); tables usable at 375 px; axe
// and screenshots of the Security page at desktop width and 375 px.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import * as OTPAuth from "otpauth";
import { startStack } from "../../gateway/test/harness.ts";
import { buildConsole } from "../../scripts/lib/console-build.mjs";
import {
  axeViolations,
  connectApplication,
  launchBrowser,
  openConsole as openTab,
  signInAsMember,
  virtualAuthenticator,
  visit,
} from "./browser-kit.mjs";

const SHOTS = path.join(import.meta.dirname, "..", "..", "test-results", "console");
const MOBILE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };

let stack;
let browser;
let account;
/** The console at 127.0.0.1, and at `localhost` for passkeys (WebAuthn takes no IP address as relying party). */
let consoleUrl;
let localhostUrl;

before(async () => {
  await buildConsole();
  stack = await startStack();
  consoleUrl = `${stack.base}/console/`;
  localhostUrl = consoleUrl.replace("//127.0.0.1:", "//localhost:");
  account = await stack.admin("POST", "/accounts", { email: `security-${Date.now()}@example.com`, plan: "pro" });
  browser = await launchBrowser();
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A new owner of the account, for one test: its email, password and name. */
async function newMember(label) {
  const member = {
    email: `${label}-${Date.now()}@example.com`,
    password: `${label} correct horse battery`,
    name: `${label[0].toUpperCase()}${label.slice(1)} Member`,
  };
  await stack.admin("POST", `/accounts/${account.id}/members`, member);
  return member;
}

function openConsole(viewport, url = consoleUrl) {
  return openTab(browser, url, viewport);
}

/** The TOTP code of `secret` `steps` time steps from now (the API accepts one step either side, each step once). */
function totp(secret, steps = 0) {
  const factor = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), digits: 6, period: 30 });
  return factor.generate({ timestamp: Date.now() + steps * 30_000 });
}

/** The console's sign-out, then its sign-in page. */
async function signOut(page) {
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await page.getByLabel("Email").waitFor();
}

/** The Security page's two-step section: set up, the secret copied from the page, confirmed; the recovery codes. */
async function setUpTotp(page) {
  const section = page.locator("section.card", { has: page.getByRole("heading", { name: "Two-step verification" }) });
  await section.getByText("Off", { exact: true }).waitFor();
  await section.getByRole("button", { name: "Set up" }).click();
  const secret = (await section.locator(".copyable", { hasText: "Secret key" }).locator("code").textContent()).trim();
  assert.match(secret, /^[A-Z2-7]{16,64}$/);
  const uri = await section.locator(".copyable", { hasText: "Setup link" }).locator("code").textContent();
  assert.match(uri, /^otpauth:\/\/totp\/.+secret=/);
  assert.equal(await section.getByRole("link", { name: "Open in an authenticator app" }).getAttribute("href"), uri);
  return { section, secret };
}

describe("a member's security in the console", () => {
  it("two-step verification: set up on the Security page, then sign-in asks for a code; a wrong one is refused", async () => {
    const member = await newMember("totp");
    const { context, page, problems } = await openConsole();
    await signInAsMember(page, member.email, member.password);
    await visit(page, "security");
    const { section, secret } = await setUpTotp(page);
    // The current step's code (still accepted if the step turns before it arrives); the sign-in below takes the
    // next step's, as each step is used once.
    await section.getByLabel("Code from the app").fill(totp(secret));
    await section.getByRole("button", { name: "Turn on" }).click();
    const codes = section.getByRole("list", { name: "Recovery codes" }).getByRole("listitem");
    await section.getByText(/Save these recovery codes now/).waitFor();
    assert.equal(await codes.count(), 10);
    const recovery = await codes.allTextContents();
    for (const code of recovery) assert.match(code, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
    await page.screenshot({ path: path.join(SHOTS, "desktop-security-recovery-codes.png"), fullPage: true });
    assert.deepEqual(await axeViolations(page), [], "recovery codes");
    await section.getByRole("button", { name: "I saved them" }).click();
    await section.getByText("On", { exact: true }).waitFor();
    assert.equal(await section.getByRole("button", { name: "Turn off" }).count(), 1);

    // Signed out, the sign-in asks for the code after the password.
    await signOut(page);
    await page.getByLabel("Email").fill(member.email);
    await page.getByLabel("Password").fill(member.password);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    const code = page.getByLabel("Authentication code");
    await code.waitFor();
    const valid = new Set([-1, 0, 1].map((steps) => totp(secret, steps)));
    let wrong = 123456;
    while (valid.has(String(wrong))) wrong++;
    await code.fill(String(wrong));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page
      .getByRole("alert")
      .getByText(/The MFA code is invalid or was already used/)
      .waitFor();
    assert.equal(await page.getByRole("button", { name: "Sign out", exact: true }).count(), 0);
    await code.fill(totp(secret, 1));
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
    const session = await page.evaluate(async () => (await fetch("/v1/auth/session")).json());
    assert.equal(session.member.mfa_enabled, true);

    // Turning it off asks for a code: a recovery code serves (the app's next steps are used up by now).
    await visit(page, "security");
    await section.getByRole("button", { name: "Turn off" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Current code").fill(recovery[0]);
    await dialog.getByRole("button", { name: "Turn off" }).click();
    await dialog.waitFor({ state: "hidden" });
    await section.getByText("Off", { exact: true }).waitFor();
    await signOut(page);
    await signInAsMember(page, member.email, member.password);
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("a session revoked from another browser: the console's next step goes back to sign-in, saying why", async () => {
    const member = await newMember("expiry");
    const first = await openConsole();
    await signInAsMember(first.page, member.email, member.password);
    await visit(first.page, "security");
    // The other browser, a phone: its sessions' table keeps the Revoke button on screen at 375 px.
    const phone = await openConsole(MOBILE);
    await signInAsMember(phone.page, member.email, member.password);
    await visit(phone.page, "my-sessions");
    const rows = phone.page.getByRole("region", { name: "My sessions" }).getByRole("row");
    // The header row, this session's and the other's (rows keep their role when they stack).
    assert.equal(await rows.count(), 3);
    const revoke = phone.page.getByRole("button", { name: "Revoke" });
    assert.equal(await revoke.count(), 1);
    const box = await revoke.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= MOBILE.width, JSON.stringify(box));
    assert.equal(
      await phone.page.evaluate(() => document.documentElement.scrollWidth),
      MOBILE.width,
      "the page scrolls sideways",
    );
    await phone.page.screenshot({ path: path.join(SHOTS, "mobile-my-sessions-revoke.png"), fullPage: true });
    assert.deepEqual(await axeViolations(phone.page), [], "my sessions at 375 px");
    await revoke.click();
    await phone.page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await phone.page.getByRole("dialog").waitFor({ state: "hidden" });
    await phone.page.waitForFunction(() => document.querySelectorAll("main tbody tr").length === 1);

    // The first browser's next step (a page of the menu) finds its session ended.
    await first.page.locator('nav a[href="#/my-sessions"]').click();
    await first.page.getByText(/Your session has ended/).waitFor();
    await first.page.getByLabel("Email").waitFor();
    assert.equal(await first.page.getByRole("button", { name: "Sign out", exact: true }).count(), 0);
    await first.page.screenshot({ path: path.join(SHOTS, "desktop-session-ended.png"), fullPage: true });
    // A reload stays signed out; signing in again works.
    await first.page.reload();
    await signInAsMember(first.page, member.email, member.password);
    for (const tab of [first, phone]) assert.deepEqual(tab.problems, []);
    await Promise.all([first.context.close(), phone.context.close()]);
  });

  it("passkeys: add one on the Security page, sign in with it (no password), remove it, then it signs in no more", async () => {
    const member = await newMember("passkey");
    const { context, page, problems } = await openConsole(DESKTOP, localhostUrl);
    const authenticator = await virtualAuthenticator(page);
    await signInAsMember(page, member.email, member.password);
    await visit(page, "security");
    const table = page.getByRole("region", { name: "Passkeys" });
    await page.getByText("No passkeys yet.").waitFor();
    await page.getByRole("button", { name: "Add a passkey" }).click();
    const dialog = page.getByRole("dialog");
    assert.equal(await dialog.getByLabel("Name").inputValue(), "Passkey on Linux");
    await dialog.getByLabel("Name").fill("Work laptop");
    await dialog.getByRole("button", { name: "Create the passkey" }).click();
    await dialog.waitFor({ state: "hidden" });
    const row = table.getByRole("row", { name: /Work laptop/ });
    await row.waitFor();
    assert.match(await row.textContent(), /Work laptop.*never/);
    assert.equal((await authenticator.credentials()).length, 1);

    // Signed out, the passkey alone signs in; a reload stays signed in.
    await signOut(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
    assert.match(await page.locator(".topbar .who").textContent(), /Passkey Member/);
    await page.reload();
    await page.getByRole("button", { name: "Sign out", exact: true }).waitFor();
    await visit(page, "security");
    assert.doesNotMatch(await row.textContent(), /never/, "its last use is shown");

    // Removed, it signs in no more: the sign-in page says so.
    await row.getByRole("button", { name: "Remove" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Remove" }).click();
    await page.getByText("No passkeys yet.").waitFor();
    await signOut(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await page
      .getByRole("alert")
      .getByText(/That passkey did not sign you in/)
      .waitFor();
    assert.equal(await page.getByRole("button", { name: "Sign out", exact: true }).count(), 0);
    assert.deepEqual(await axeViolations(page), [], "sign-in, passkey refused");
    await page.screenshot({ path: path.join(SHOTS, "desktop-sign-in-passkey-refused.png"), fullPage: true });
    assert.deepEqual(problems, []);
    await context.close();
  });

  it("a browser without passkeys is told so, with no passkey buttons", async () => {
    const member = await newMember("nopasskey");
    const { context, page, problems } = await openConsole();
    await page.addInitScript(() => {
      delete window.PublicKeyCredential;
    });
    await page.reload();
    await page.getByText(/Passkeys are not supported by this browser/).waitFor();
    assert.equal(await page.getByRole("button", { name: "Sign in with a passkey" }).count(), 0);
    await signInAsMember(page, member.email, member.password);
    await visit(page, "security");
    await page.getByText(/Passkeys are not supported by this browser/).waitFor();
    assert.equal(await page.getByRole("button", { name: "Add a passkey" }).count(), 0);
    assert.deepEqual(problems, []);
    await context.close();
  });

  for (const [label, viewport] of [
    ["desktop", DESKTOP],
    ["mobile", MOBILE],
  ]) {
    it(`the Security page has no serious or critical axe violation, and is screenshotted (${label})`, async () => {
      const member = await newMember(`shots-${label}`);
      const { context, page, problems } = await openConsole(viewport, localhostUrl);
      await virtualAuthenticator(page);
      const shoot = async (name) => {
        await page.screenshot({ path: path.join(SHOTS, `${label}-${name}.png`), fullPage: true });
        assert.deepEqual(await axeViolations(page), [], name);
      };
      await page.getByRole("button", { name: "Sign in with a passkey" }).waitFor();
      await shoot("sign-in-passkey");
      await signInAsMember(page, member.email, member.password);
      await visit(page, "security");
      await page.getByRole("button", { name: "Add a passkey" }).click();
      await shoot("security-add-passkey");
      await page.getByRole("dialog").getByRole("button", { name: "Create the passkey" }).click();
      await page.getByRole("dialog").waitFor({ state: "hidden" });
      const remove = page.getByRole("region", { name: "Passkeys" }).getByRole("button", { name: "Remove" });
      await remove.waitFor();
      const box = await remove.boundingBox();
      assert.ok(box && box.x + box.width <= viewport.width, JSON.stringify(box));
      await shoot("security");
      await page.getByRole("button", { name: "Set up" }).click();
      await page.getByLabel("Code from the app").waitFor();
      await shoot("security-totp-setup");
      if (label === "mobile") {
        // Connected applications at 375 px: its Revoke on screen.
        await connectApplication(page, new URL(localhostUrl).origin, "Phone assistant");
        await page.goto(localhostUrl);
        await visit(page, "connected-apps");
        const revoke = page.getByRole("button", { name: "Revoke" });
        const revokeBox = await revoke.boundingBox();
        assert.ok(revokeBox && revokeBox.x + revokeBox.width <= viewport.width, JSON.stringify(revokeBox));
        assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), viewport.width);
        await shoot("connected-apps-revoke");
      }
      assert.deepEqual(problems, []);
      await context.close();
    });
  }
});

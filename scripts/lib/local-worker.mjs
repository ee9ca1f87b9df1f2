// Shared by `npm run dev` and `npm run bench`: run wrangler, wait for the worker, seed an account.
import { spawn, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { get as httpsGet } from "node:https";
import path from "node:path";
import { root, wranglerBin } from "./wrangler-cli.mjs";

export { root };

/** .dev.vars holds local secrets; a fresh clone gets the committed development values. */
export function ensureDevVars() {
  const target = path.join(root, ".dev.vars");
  if (!existsSync(target)) copyFileSync(path.join(root, ".dev.vars.example"), target);
  // A .dev.vars made before members: it gains the development pepper (sign-in needs one).
  if (!/^PASSWORD_PEPPER=/m.test(readFileSync(target, "utf8"))) {
    const example = readFileSync(path.join(root, ".dev.vars.example"), "utf8");
    appendFileSync(target, `\n${/^PASSWORD_PEPPER=.*$/m.exec(example)?.[0] ?? ""}\n`);
  }
  /** @type {Record<string, string>} */
  const vars = {};
  for (const line of readFileSync(target, "utf8").split("\n")) {
    const match = /^\s*([A-Z_]+)\s*=\s*"?(.*?)"?\s*$/.exec(line);
    if (match) vars[match[1]] = match[2];
  }
  return vars;
}

export function wrangler(args, options = {}) {
  return spawnSync(process.execPath, [wranglerBin, ...args], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
    ...options,
  });
}

/** Local secrets, docs assets and a migrated local D1 (in `persistTo` when given). */
export function prepare({ persistTo } = {}) {
  const vars = ensureDevVars();
  spawnSync(process.execPath, [path.join(root, "scripts", "docs-assets.mjs")], { stdio: "inherit" });
  const migrated = wrangler([
    "d1",
    "migrations",
    "apply",
    "DB",
    "--local",
    ...(persistTo ? ["--persist-to", persistTo] : []),
  ]);
  if (migrated.status !== 0) throw new Error("applying local D1 migrations failed");
  return vars;
}

/** Where local runs keep their state: wrangler's, and the demo keys beside it. */
const DEFAULT_STATE_DIR = path.join(root, ".wrangler");

/** The local gateway's port (`npm run dev` starts it; `gateway/` defaults to it too). */
export const LOCAL_GATEWAY_PORT = 7777;

/**
 * wrangler.toml's vars name production hosts: a local server links to itself (mailed and webhooked download links)
 * and proxy-tests through the local gateway. One gateway node unless a run says otherwise: a slot each
 * (`GATEWAY_SLOTS`), so no part of a sub-user's limits stands at a node that is not there.
 */
function localSettings(base) {
  return {
    API_ORIGIN: base,
    GATEWAY_HOST: "127.0.0.1",
    GATEWAY_PORT: String(LOCAL_GATEWAY_PORT),
    GATEWAY_SLOTS: "1",
    // Members' mail stays in the local outbox (GET /internal/dev/outbox), so invitations work offline.
    MAIL_OUTBOX: "on",
  };
}

/**
 * wrangler.toml as local runs use it: every queue delivers at once (production batches usage for up to 55 s, so that
 * each account's store is called about once a minute). Written next to wrangler.toml (its paths are relative to it).
 */
function localConfig() {
  const config = path.join(root, "wrangler.local.toml");
  const production = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  writeFileSync(config, production.replace(/^max_batch_timeout = \d+$/gm, "max_batch_timeout = 0"));
  return config;
}

/**
 * Starts `wrangler dev` on `port`; resolves once /healthz answers. `https` serves it with wrangler's local
 * self-signed certificate (fetch it with `getInsecure`); `persistTo` keeps its local state apart; `inspectorPort`
 * fixes the port of the worker's DevTools inspector (wrangler picks a free one otherwise). `queueWindows`:
 * `instant` (every queue delivers at once) or `production` (wrangler.toml's batch windows).
 * @param {number} port
 * @param {{quiet?: boolean, vars?: Record<string, string>, https?: boolean, persistTo?: string,
 *   inspectorPort?: number, queueWindows?: "instant" | "production"}} [options]
 */
export async function startWorker(
  port,
  { quiet = false, vars = {}, https = false, persistTo, inspectorPort, queueWindows = "instant" } = {},
) {
  const base = `${https ? "https" : "http"}://127.0.0.1:${port}`;
  const config = queueWindows === "production" ? path.join(root, "wrangler.toml") : localConfig();
  const args = [wranglerBin, "dev", "--config", config, "--port", String(port), "--ip", "127.0.0.1"];
  if (https) args.push("--local-protocol", "https");
  if (persistTo) args.push("--persist-to", persistTo);
  if (inspectorPort) args.push("--inspector-port", String(inspectorPort));
  for (const [name, value] of Object.entries({ ...localSettings(base), ...vars }))
    args.push("--var", `${name}:${value}`);
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: quiet ? "ignore" : "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  for (let attempt = 0; attempt < 240; attempt++) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      const response = https ? await getInsecure(`${base}/healthz`) : await fetch(`${base}/healthz`);
      if (response.ok) return { child, base };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  child.kill();
  throw new Error("wrangler dev did not become ready in 120 s");
}

/** A GET to the local HTTPS worker, whose certificate is wrangler's self-signed one. */
export function getInsecure(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const request = httpsGet(url, { headers, rejectUnauthorized: false }, (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () =>
        resolve({ ok: response.statusCode === 200, status: response.statusCode, text: () => body }),
      );
    });
    request.on("error", reject);
  });
}

export async function adminCall(base, adminToken, method, route, body) {
  const response = await fetch(`${base}/internal/admin${route}`, {
    method,
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(payload)}`);
  return payload;
}

/**
 * An account with an API key. The token is kept in .wrangler/ (git-ignored) so later runs print the
 * same key; a key that no longer works is replaced. `topUpTo`: credit the balance back up to this amount.
 * `stateDir`: where the token is kept (`.wrangler/` unless the local state lives elsewhere).
 */
export async function ensureAccount(
  base,
  adminToken,
  { email, plan, balance_usd, limits, topUpTo, file, stateDir = DEFAULT_STATE_DIR },
) {
  const stateFile = path.join(stateDir, file);
  if (existsSync(stateFile)) {
    const saved = JSON.parse(readFileSync(stateFile, "utf8"));
    const check = await fetch(`${base}/v1/users/me`, { headers: { Authorization: `Bearer ${saved.token}` } });
    if (check.ok) {
      if (limits) await adminCall(base, adminToken, "PATCH", `/accounts/${saved.accountId}`, { limits });
      const balance = (await check.json()).balance.amount;
      if (topUpTo && balance < topUpTo) {
        const amount_usd = Math.round((topUpTo - balance) * 100) / 100;
        await adminCall(base, adminToken, "POST", `/accounts/${saved.accountId}/credits`, { amount_usd });
      }
      return saved;
    }
  }
  const found = await adminCall(base, adminToken, "GET", `/accounts?email=${encodeURIComponent(email)}`);
  const account =
    found.data[0] ?? (await adminCall(base, adminToken, "POST", "/accounts", { email, plan, balance_usd }));
  if (limits) await adminCall(base, adminToken, "PATCH", `/accounts/${account.id}`, { limits });
  const key = await adminCall(base, adminToken, "POST", `/accounts/${account.id}/api-keys`, {});
  const saved = { accountId: account.id, email, token: key.token };
  mkdirSync(path.dirname(stateFile), { recursive: true });
  writeFileSync(stateFile, JSON.stringify(saved, null, 2));
  return saved;
}

/**
 * The demo account's owner, a member who signs in to the console with email and password: made once through the
 * admin API with a fixed local password (this is local development's demo, never a deployment's).
 */
export async function ensureDemoOwner(base, adminToken, accountId) {
  const owner = { email: "owner@example.com", password: "demo-owner-password" };
  const response = await fetch(`${base}/internal/admin/accounts/${accountId}/members`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ ...owner, name: "Demo Owner", role: "owner" }),
  });
  // 409: made by an earlier run, with the same password.
  if (!response.ok && response.status !== 409)
    throw new Error(`demo owner: ${response.status} ${await response.text()}`);
  return owner;
}

/**
 * Prints the mail the worker keeps in its local outbox (invitations, password resets) as it arrives, so their links
 * can be followed offline. Returns a function that stops it.
 */
export function printOutbox(base, adminToken, everyMs = 5000) {
  const seen = new Set();
  let first = true;
  const poll = async () => {
    const response = await fetch(`${base}/internal/dev/outbox?limit=20`, {
      headers: { Authorization: `Bearer ${adminToken}` },
    }).catch(() => null);
    if (!response?.ok) return;
    const { data } = await response.json();
    for (const mail of data.reverse()) {
      if (seen.has(mail.id)) continue;
      seen.add(mail.id);
      // Mail from before this start is not news.
      if (!first) console.log(`\n  ── Mail to ${mail.to}: ${mail.subject}\n${mail.text.replace(/^/gm, "     ")}\n`);
    }
    first = false;
  };
  const timer = setInterval(() => poll(), everyMs);
  poll();
  return () => clearInterval(timer);
}

/**
 * A sandbox (`test_`) key of an account, kept in .wrangler/ like the account's own key and replaced when it no
 * longer works (e.g. after the local state was wiped).
 */
export async function ensureSandboxKey(base, adminToken, accountId, file, stateDir = DEFAULT_STATE_DIR) {
  const stateFile = path.join(stateDir, file);
  if (existsSync(stateFile)) {
    const saved = JSON.parse(readFileSync(stateFile, "utf8"));
    const check = await fetch(`${base}/v1/users/me`, { headers: { Authorization: `Bearer ${saved.token}` } });
    if (saved.liveAccountId === accountId && check.ok) return saved;
  }
  const key = await adminCall(base, adminToken, "POST", `/accounts/${accountId}/api-keys`, { mode: "test" });
  const saved = { liveAccountId: accountId, accountId: key.account_id, token: key.token };
  mkdirSync(path.dirname(stateFile), { recursive: true });
  writeFileSync(stateFile, JSON.stringify(saved, null, 2));
  return saved;
}

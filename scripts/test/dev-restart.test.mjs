// `npm run dev` over local state that has seen traffic: it starts again, as often as a developer restarts it.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";

const root = path.join(import.meta.dirname, "..", "..");
const PORT = 8871;
const GATEWAY_PORT = 7871;
const base = `http://127.0.0.1:${PORT}`;
const state = mkdtempSync(path.join(tmpdir(), "dev-restart-"));
after(() => rmSync(state, { recursive: true, force: true }));

/** Starts `npm run dev` on its own ports and state; resolves with the printed key and proxy credentials. */
function startDev() {
  const child = spawn(
    process.execPath,
    ["scripts/dev.mjs", "--port", String(PORT), "--gateway-port", String(GATEWAY_PORT), "--persist-to", state],
    { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "true" }, detached: true },
  );
  let output = "";
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run dev did not start in 180 s:\n${output}`)), 180_000);
    const read = (chunk) => {
      output += chunk;
      const key = /API key {4}(\S+)/.exec(output);
      const proxy = /curl -x http:\/\/([^:]+):([^@]+)@localhost/.exec(output);
      if (output.includes("Proxy Account API is running.") && key && proxy) {
        clearTimeout(timer);
        resolve({ key: key[1], user: proxy[1], password: proxy[2] });
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`npm run dev exited with ${code}:\n${output}`));
    });
  });
  return { child, ready };
}

/** Stops `npm run dev` and everything it started (its process group: wrangler, workerd). */
function stop(child) {
  return new Promise((resolve) => {
    child.removeAllListeners("exit");
    const timer = setTimeout(() => signal("SIGKILL"), 10_000);
    const signal = (name) => {
      try {
        process.kill(-child.pid, name);
      } catch {
        // already gone
      }
    };
    child.on("exit", () => {
      clearTimeout(timer);
      signal("SIGKILL");
      resolve();
    });
    if (child.exitCode !== null) child.emit("exit");
    else signal("SIGTERM");
  });
}

/** One request through the local gateway, as `curl -x` sends it. */
function proxied(user, password) {
  return new Promise((resolve, reject) => {
    const auth = Buffer.from(`${user}:${password}`).toString("base64");
    const req = request(
      {
        host: "127.0.0.1",
        port: GATEWAY_PORT,
        path: `${base}/healthz`,
        headers: { "Proxy-Authorization": `Basic ${auth}` },
      },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

const get = async (key, route) => {
  const response = await fetch(`${base}/v1${route}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
};

test("npm run dev starts twice over the same local state after traffic, and every pool reads", {
  timeout: 420_000,
}, async () => {
  const first = startDev();
  try {
    const { key, user, password } = await first.ready;
    assert.equal(await proxied(user, password), 200);
    // The gateway reports the request within a second; it shows in traffic once applied.
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 3_600_000).toISOString();
    for (let attempt = 0; ; attempt++) {
      const traffic = await get(key, `/residential/traffic?from=${from}&to=${to}`);
      if (traffic.body.rows?.[0]?.requests >= 1) break;
      assert.ok(attempt < 60, `no traffic after 30 s: ${JSON.stringify(traffic.body)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  } finally {
    await stop(first.child);
  }

  const second = startDev();
  try {
    const { key } = await second.ready;
    for (const product of ["residential", "mobile"]) {
      const pool = await get(key, `/${product}/balance`);
      assert.equal(pool.status, 200, JSON.stringify(pool.body));
    }
    const residential = await get(key, "/residential/balance");
    assert.ok(residential.body.forecast.avg_daily_gb > 0);
    assert.equal(residential.body.forecast.projected_exhaustion_at, null);
  } finally {
    await stop(second.child);
  }
});

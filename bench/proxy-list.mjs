// `npm run bench:lists`: a 1,000-line sticky proxy list against a running `npm run dev` of this checkout (goal:
// it answers in ≤ 200 ms, and each line works through the local gateway). A fresh residential sub-user of the demo
// account; GET /v1/subusers/{id}/proxy-list?country=us&session=sticky&count=1000&sesstime=30, timed from the request
// to the last byte (after warm-up calls); then every line of the last list, its password put in, parsed by the
// username grammar the gateway nodes run and sent through the gateway to its echo host (which uses no credit). The
// sub-user is deleted at the end. Results: bench/results/proxy-list-<time>.json.
//
//   npm run bench:lists [-- --base http://localhost:8787 --persist-to <dir> --runs 50]
//
// `--persist-to`: the folder `npm run dev --persist-to` was given (where its demo key is kept; default .wrangler/).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { parseArgs } from "node:util";
import { PASSWORD_PLACEHOLDER } from "../src/domain/gateway/proxy-lines.ts";
import { parseUsername } from "../src/domain/gateway/username.ts";
import { inParallel, percentile, sleep } from "./http.mjs";

const { values: options } = parseArgs({
  options: {
    base: { type: "string", default: "http://localhost:8787" },
    "persist-to": { type: "string" },
    runs: { type: "string", default: "50" },
  },
});
const BASE = options.base.replace(/\/$/, "");
const RUNS = Number(options.runs);
const WARM_UP = 5;
const LINES = 1000;
const GOAL_MS = 200;
const IN_FLIGHT = 25;
const root = path.join(import.meta.dirname, "..");

const stateDir = options["persist-to"] ? path.resolve(options["persist-to"]) : path.join(root, ".wrangler");
const { token } = JSON.parse(readFileSync(path.join(stateDir, "demo-account.json"), "utf8"));
const auth = { Authorization: `Bearer ${token}` };

async function api(method, route, body) {
  const response = await fetch(`${BASE}/v1${route}`, {
    method,
    headers: { ...auth, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(payload)}`);
  return payload;
}

/** A plain HTTP proxy request through the gateway on a new connection; resolves with its status and body. */
function throughGateway({ host, port, username, password }, url) {
  return new Promise((resolve, reject) => {
    const request = http.request({
      host,
      port,
      path: url,
      agent: false,
      headers: {
        Host: new URL(url).host,
        "Proxy-Authorization": `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`,
      },
    });
    request.on("response", (response) => {
      let body = "";
      response.on("data", (chunk) => {
        body += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode, headers: response.headers, body }));
    });
    request.on("error", reject);
    request.end();
  });
}

const prefix = (await api("GET", "/gateway")).username_prefix;
const subuser = await api("POST", "/subusers", {
  label: `bench-list-${Date.now().toString(36)}`,
  products: ["residential"],
});
const listPath = `/subusers/${subuser.id}/proxy-list?country=us&session=sticky&count=${LINES}&sesstime=30`;
try {
  const timings = [];
  let text = "";
  let bytes = 0;
  for (let run = 0; run < WARM_UP + RUNS; run++) {
    const started = performance.now();
    const response = await fetch(`${BASE}/v1${listPath}`, { headers: auth });
    text = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 200) throw new Error(`GET ${listPath}: ${response.status} ${text.slice(0, 300)}`);
    bytes = Buffer.byteLength(text);
    if (run >= WARM_UP) timings.push(elapsed);
  }

  const lines = text.split("\n").slice(0, -1);
  if (lines.length !== LINES) throw new Error(`the list has ${lines.length} lines, not ${LINES}`);
  const sessions = new Set();
  const logins = lines.map((line) => {
    const [host, port, username, password] = line.split(":");
    if (password !== PASSWORD_PLACEHOLDER) throw new Error(`${line}: no password placeholder`);
    const parsed = parseUsername(username, prefix);
    if (!parsed.ok) throw new Error(`${line}: the gateway's grammar refuses it (${parsed.error})`);
    sessions.add(parsed.value.target.sessionId);
    return { host, port: Number(port), username, password: subuser.password };
  });

  const proxiedStart = performance.now();
  const failures = [];
  let retried = 0;
  await inParallel(logins, IN_FLIGHT, async (login) => {
    // As clients should: a 429 for the sub-user's rps or concurrency (Pro: 1,000 a second) waits its Retry-After.
    for (let attempt = 1; ; attempt++) {
      const answer = await throughGateway(login, "http://echo.gateway.local/echo");
      const code = answer.headers["x-service-error-code"];
      if (answer.status === 429 && ["rps-limit", "concurrent-limit"].includes(code) && attempt < 5) {
        retried++;
        await sleep(Number(answer.headers["retry-after"] ?? 1) * 1000);
        continue;
      }
      if (answer.status !== 200)
        failures.push(`${login.username}: ${answer.status} ${code ?? answer.body.slice(0, 120)}`);
      return;
    }
  });
  const proxiedMs = performance.now() - proxiedStart;

  const result = {
    at: new Date().toISOString(),
    base: BASE,
    list: { lines: LINES, bytes, runs: RUNS, warm_up: WARM_UP },
    latency_ms: {
      p50: round(percentile(timings, 50)),
      p95: round(percentile(timings, 95)),
      p99: round(percentile(timings, 99)),
      max: round(Math.max(...timings)),
      mean: round(timings.reduce((sum, ms) => sum + ms, 0) / timings.length),
    },
    goal_ms: GOAL_MS,
    goal_met: percentile(timings, 95) <= GOAL_MS,
    lines_parsed: logins.length,
    distinct_sessions: sessions.size,
    through_gateway: {
      ok: LINES - failures.length,
      failed: failures.length,
      retried_after_429: retried,
      in_flight: IN_FLIGHT,
      ms: round(proxiedMs),
    },
    failures: failures.slice(0, 10),
  };
  const out = path.join(
    root,
    "bench",
    "results",
    `proxy-list-${result.at.replaceAll(":", "-").replace(".", "-")}.json`,
  );
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `proxy list of ${LINES} sticky lines (${(bytes / 1024).toFixed(1)} KB), ${RUNS} runs: p50 ${result.latency_ms.p50} ms, ` +
      `p95 ${result.latency_ms.p95} ms, max ${result.latency_ms.max} ms (goal p95 ≤ ${GOAL_MS} ms: ` +
      `${result.goal_met ? "met" : "NOT met"}); ${logins.length} lines parsed (${sessions.size} sessions), ` +
      `${result.through_gateway.ok}/${LINES} through the gateway in ${result.through_gateway.ms} ms ` +
      `(${retried} retried after a 429)\n${path.relative(root, out)}`,
  );
  if (!result.goal_met || failures.length > 0) process.exitCode = 1;
} finally {
  await api("DELETE", `/subusers/${subuser.id}`);
}

function round(ms) {
  return Math.round(ms * 10) / 10;
}

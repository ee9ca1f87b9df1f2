// `npm run bench:profile [-- orders|users-me|traffic-<group>]`: where a route's time goes. Starts the worker locally (wrangler dev,
// state in memory), drives the route with autocannon while the worker's V8 profiler samples it through the
// DevTools inspector, and prints the self time by area of the code (our modules by folder, each library by
// package) and the heaviest functions. Durable Objects run in the worker's isolate and show up here too; the
// local D1 runs in its own isolate, so its SQL shows as time spent waiting, not sampled. The traffic routes
// (`traffic-subuser`, `traffic-hour`, `traffic-status`, `traffic-error_code`) are `npm run bench`'s traffic rows, on
// the same seeded history (1,000 sub-users, 90 days; a few minutes of seeding and fold first).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import autocannon from "autocannon";
import WebSocket from "ws";
import { ensureAccount, prepare, root, startWorker } from "../scripts/lib/local-worker.mjs";
import { BENCH_LIMITS, buyBandwidth } from "./accounts.mjs";
import { apiClient } from "./http.mjs";
import { seedTrafficHistory, trafficQueryTargets } from "./seed-traffic.mjs";

const PORT = 8798;
const INSPECTOR_PORT = 9339;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 8);
const route = process.argv[2] ?? "orders";

const persistTo = mkdtempSync(path.join("/dev/shm", "profile-"));
const vars = prepare({ persistTo });
const { child, base } = await startWorker(PORT, {
  quiet: true,
  persistTo,
  inspectorPort: INSPECTOR_PORT,
  vars: { LOG_REQUESTS: "false" },
});
try {
  const account = await ensureAccount(base, vars.ADMIN_TOKEN, {
    email: "profile@example.com",
    plan: "enterprise",
    balance_usd: 1_000_000,
    topUpTo: 1_000_000,
    limits: BENCH_LIMITS,
    file: "profile-account.json",
  });
  const auth = { Authorization: `Bearer ${account.token}` };
  await buyBandwidth(apiClient(base), auth);
  const target = route.startsWith("traffic-")
    ? await trafficTarget(route.slice("traffic-".length))
    : targets(auth)[route];
  if (!target) throw new Error(`unknown route ${route}; one of ${Object.keys(targets(auth)).join(", ")}, traffic-*`);

  await drive(target, 2);
  const inspector = await connect(INSPECTOR_PORT);
  await inspector.call("Profiler.enable");
  await inspector.call("Profiler.setSamplingInterval", { interval: 200 });
  await inspector.call("Profiler.start");
  const result = await drive(target, DURATION_S);
  const { profile } = await inspector.call("Profiler.stop");
  inspector.close();
  console.log(`${route}: ${Math.round(result.requests.average)} req/s, p50 ${result.latency.p50} ms`);
  summarize(profile, result.requests.total, bundleModules());
} finally {
  child.kill("SIGTERM");
  rmSync(persistTo, { recursive: true, force: true });
}

function targets(auth) {
  return {
    orders: {
      path: "/v1/orders",
      method: "POST",
      headers: { ...auth, "Content-Type": "application/json", "Idempotency-Key": "profile-[<id>]" },
      body: JSON.stringify({ product: "residential", gb: 0.001 }),
      idReplacement: true,
    },
    "users-me": { path: "/v1/users/me", headers: auth },
  };
}

/** One of `npm run bench`'s traffic rows, by its grouping, on the same seeded history. */
async function trafficTarget(groupBy) {
  const api = apiClient(base);
  const tokens = { adminToken: vars.ADMIN_TOKEN, gatewayToken: vars.GATEWAY_TOKEN };
  const history = await seedTrafficHistory(api, tokens, { subusers: 1000, minuteSubusers: 50, concurrency: 12 });
  const targets = await trafficQueryTargets(api, history);
  return targets.find((target) => target.name.endsWith(`group_by=${groupBy}`));
}

function drive(target, duration) {
  return autocannon({ url: `${base}${target.path}`, connections: 50, duration, ...target });
}

/** A DevTools protocol session on the worker's inspector. */
async function connect(port) {
  const [page] = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  // The inspector proxy accepts DevTools' origin only.
  const socket = new WebSocket(page.webSocketDebuggerUrl, { origin: "https://devtools.devprod.cloudflare.dev" });
  await new Promise((resolve, reject) => {
    socket.onopen = resolve;
    socket.onerror = reject;
  });
  const pending = new Map();
  let next = 1;
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message.result);
    pending.delete(message.id);
  };
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        const id = next++;
        pending.set(id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** Self time per area and per function, as ms per request of the run. */
function summarize(profile, requests, moduleAt) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  for (const [index, sample] of profile.samples.entries())
    self.set(sample, (self.get(sample) ?? 0) + (deltas[index] ?? 0));
  const areas = new Map();
  const functions = new Map();
  for (const [id, micros] of self) {
    const { callFrame } = byId.get(id);
    const area = callFrame.url === "index.js" ? moduleAt(callFrame.lineNumber) : areaOf(callFrame);
    areas.set(area, (areas.get(area) ?? 0) + micros);
    const name = `${callFrame.functionName || "(anonymous)"} ${area}:${callFrame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const perRequest = (micros) => (micros / 1000 / requests).toFixed(3);
  console.log("\nself time by area (ms per request)");
  for (const [area, micros] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`  ${perRequest(micros).padStart(7)}  ${area}`);
  }
  console.log("\nheaviest functions (ms per request)");
  for (const [name, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
    console.log(`  ${perRequest(micros).padStart(7)}  ${name}`);
  }
}

/**
 * The module of each line of the bundle wrangler is serving: esbuild heads each module's code with a
 * `// path/to/module.ts` comment. Our modules are named by folder, libraries by package.
 */
function bundleModules() {
  const tmp = path.join(root, ".wrangler", "tmp");
  const [dir] = readdirSync(tmp)
    .map((name) => path.join(tmp, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const starts = [];
  for (const [line, text] of readFileSync(path.join(dir, "index.js"), "utf8").split("\n").entries()) {
    const heading = text.match(/^\/\/ (\S+\.[cm]?[jt]s)$/);
    if (heading) starts.push([line, heading[1]]);
  }
  return (line) => {
    let module = "index.js";
    for (const [start, name] of starts) {
      if (start > line) break;
      module = name;
    }
    const packageMatch = module.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    return packageMatch ? packageMatch[1] : module;
  };
}

function areaOf({ url, functionName }) {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  const packageMatch = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (packageMatch) return packageMatch[1];
  const ours = url.match(/\/(src|durable-objects)\/(.*)$/);
  if (ours) return path.dirname(`${ours[1]}/${ours[2]}`);
  return url.replace(/^.*\//, "");
}

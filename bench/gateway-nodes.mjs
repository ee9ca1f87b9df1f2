// `npm run bench` (after the API rows): the gateway deciding at the node. Three local gateway nodes in front of
// `wrangler dev`; a sub-user whose credentials every node already holds (warm); then
//  - API calls per 1,000 new connections: 1,000 proxied requests, each on a new connection, spread over the nodes,
//    counting every call the nodes make to the API but usage reports (goal ≤ 10);
//  - API calls per new sticky session: 300 new sticky usernames through the same nodes (goal 0: every node computes a
//    session's exit itself), all calls but usage reports counted and the sessions route's apart;
//  - a node's decision time: the node's own decision (credentials, status, product, pool, cap, rps and
//    concurrency) for 10,000 new connections of warm credentials at 2,000 a second, p50 and p99 (goal p99 ≤ 1 ms).
// Results: bench/results/gateway-nodes-<time>.json.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { startLocalNode } from "../gateway/local-node.ts";
import { prepare, root, startWorker } from "../scripts/lib/local-worker.mjs";
import { freshAccount } from "./accounts.mjs";
import { apiClient } from "./http.mjs";

const PORT = 8798;
const NODES = 3;
const CONNECTIONS = 1_000;
const WARM_CONNECTIONS = 300;
const STICKY_SESSIONS = 300;
const DECISIONS = 10_000;
const DECISIONS_PER_SECOND = 2_000;
const GOALS = { apiCallsPerThousand: 10, apiCallsPerStickySession: 0, decisionP99Ms: 1 };

const state = mkdtempSync(path.join(tmpdir(), "bench-nodes-"));
const vars = prepare({ persistTo: state });
const { child, base } = await startWorker(PORT, {
  quiet: true,
  persistTo: state,
  vars: { LOG_REQUESTS: "false", GATEWAY_SLOTS: String(NODES) },
});
const nodes = [];
try {
  for (let i = 0; i < NODES; i++) {
    nodes.push(
      await startLocalNode({ port: 0, apiOrigin: base, adminToken: vars.ADMIN_TOKEN, nodeId: `bench-node-${i + 1}` }),
    );
  }
  const api = apiClient(base);
  const account = await freshAccount(api, vars.ADMIN_TOKEN, "bench-nodes");
  const subuser = await api.post("/v1/subusers", account.auth, {
    label: "bench-nodes",
    products: ["residential"],
    concurrent_max: 10_000,
    rps_max: 10_000,
  });
  const credentials = { username: `user_${subuser.name}-type-res-region-us`, password: subuser.password };

  // Warm: every node has met the sub-user (its snapshot) and holds a share sized to this load.
  for (let i = 0; i < WARM_CONNECTIONS; i++) await proxied(nodes[i % NODES], credentials);
  const before = nonUsageCalls();
  for (let i = 0; i < CONNECTIONS; i++) await proxied(nodes[i % NODES], credentials);
  const apiCalls = nonUsageCalls() - before;
  const perThousand = (apiCalls * 1000) / CONNECTIONS;
  console.log(
    `API calls per 1,000 new connections (warm credentials, ${NODES} nodes): ${perThousand} (goal ≤ ${GOALS.apiCallsPerThousand})`,
  );

  const beforeSticky = nonUsageCalls();
  const sessionCallsBefore = callsTo("/sessions");
  for (let i = 0; i < STICKY_SESSIONS; i++) {
    const username = `user_${subuser.name}-type-res-region-us-session-b${i}-sesstime-10`;
    await proxied(nodes[i % NODES], { username, password: subuser.password });
  }
  const sticky = {
    sessions: STICKY_SESSIONS,
    apiCalls: nonUsageCalls() - beforeSticky,
    sessionRouteCalls: callsTo("/sessions") - sessionCallsBefore,
  };
  console.log(
    `API calls for ${STICKY_SESSIONS} new sticky sessions (warm credentials, ${NODES} nodes): ${sticky.apiCalls} in all, ` +
      `${sticky.sessionRouteCalls} to the sessions route (goal ${GOALS.apiCallsPerStickySession} per session)`,
  );

  const timings = await decisionTimes(nodes[0], credentials);
  const decision = {
    p50Ms: percentile(timings.sorted, 0.5),
    p99Ms: percentile(timings.sorted, 0.99),
    refused: timings.refused,
  };
  console.log(
    `a node's decision, new connection of warm credentials: p50 ${decision.p50Ms.toFixed(3)} ms, p99 ` +
      `${decision.p99Ms.toFixed(3)} ms (goal p99 ≤ ${GOALS.decisionP99Ms} ms); ${decision.refused} of ${DECISIONS} refused`,
  );

  const dir = path.join(root, "bench", "results");
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const file = path.join(dir, `gateway-nodes-${stamp}.json`);
  const result = {
    nodes: NODES,
    connections: CONNECTIONS,
    apiCalls,
    apiCallsPerThousand: perThousand,
    sticky,
    decision,
    goals: GOALS,
  };
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`results: ${path.relative(root, file)}`);
} finally {
  for (const node of nodes) await node.close({ drainMs: 1000 });
  child.kill("SIGTERM");
  rmSync(state, { recursive: true, force: true });
}

/** Every call the nodes made to the API so far, usage reports left out (they are the metering path). */
function nonUsageCalls() {
  let sum = 0;
  for (const node of nodes) {
    for (const [route, count] of Object.entries(node.apiCalls)) if (route !== "/usage") sum += count;
  }
  return sum;
}

/** The calls the nodes made to one route of the API so far. */
function callsTo(route) {
  return nodes.reduce((sum, node) => sum + (node.apiCalls[route] ?? 0), 0);
}

/** One request through `node` on a new connection (no keep-alive), to the gateway's own echo host. */
function proxied(node, { username, password }) {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: "127.0.0.1",
        port: node.port,
        path: "http://echo.gateway.local/healthz",
        agent: false,
        headers: { "Proxy-Authorization": `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
      },
      (response) => {
        response.resume();
        response.on("end", () =>
          response.statusCode === 200 ? resolve() : reject(new Error(`proxied request: ${response.statusCode}`)),
        );
      },
    );
    request.on("error", reject);
    request.end();
  });
}

/**
 * The node's decision for `DECISIONS` new connections of warm credentials, each timed alone (ms), paced at
 * `DECISIONS_PER_SECOND` (well within the sub-user's limits: a refusal is counted and reported, not expected).
 */
async function decisionTimes(node, credentials) {
  const times = [];
  let refused = 0;
  const perTick = DECISIONS_PER_SECOND / 10;
  for (let i = 0; i < DECISIONS; i++) {
    if (i % perTick === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    const connection = node.decider.connection("198.51.100.23");
    const started = performance.now();
    const decision = await connection.decide(credentials);
    times.push(performance.now() - started);
    if (!decision.allow) refused++;
    connection.close();
  }
  return { sorted: times.sort((a, b) => a - b), refused };
}

function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// `npm run dev`: local D1 migrated, a demo account seeded, its API key and the docs URL printed,
// the API served on http://localhost:8787, and the Cron Trigger's jobs run every few seconds.
//
//   npm run dev [-- --port 8787 --gateway-port 7777 --gateway-nodes 1 --persist-to <dir>]
//
// `--gateway-nodes N` starts N gateway nodes on consecutive ports from `--gateway-port`, each with its own node id.
import path from "node:path";
import { parseArgs } from "node:util";
import { startDemoGateway } from "./lib/demo-gateway.mjs";
import {
  ensureAccount,
  ensureDemoOwner,
  ensureSandboxKey,
  LOCAL_GATEWAY_PORT,
  prepare,
  printOutbox,
  startWorker,
} from "./lib/local-worker.mjs";

const { values: options } = parseArgs({
  options: {
    port: { type: "string", default: "8787" },
    "gateway-port": { type: "string", default: String(LOCAL_GATEWAY_PORT) },
    "gateway-nodes": { type: "string", default: "1" },
    // Local state (D1, Durable Objects, R2, the demo keys) in another folder than .wrangler/.
    "persist-to": { type: "string" },
  },
});
const PORT = Number(options.port);
const GATEWAY_PORT = Number(options["gateway-port"]);
const GATEWAY_NODES = Number(options["gateway-nodes"]);
if (!Number.isInteger(GATEWAY_NODES) || GATEWAY_NODES < 1 || GATEWAY_NODES > 32) {
  throw new Error("--gateway-nodes: a whole number from 1 to 32");
}
// wrangler dev never fires Cron Triggers by itself: run the every-minute jobs often, so that local state
// machines (ISP provisioning, renewals, expiry) move within seconds. Every job is idempotent.
const CRON_TICK_MS = 5_000;
const LOCAL_VARS = {
  ISP_PROVISIONING_DELAY_S: "5",
  ISP_LONG_TAIL_PROVISIONING_DELAY_S: "30",
  API_ORIGIN: `http://localhost:${PORT}`,
  GATEWAY_PORT: String(GATEWAY_PORT),
  GATEWAY_SLOTS: String(GATEWAY_NODES),
};

const persistTo = options["persist-to"] && path.resolve(options["persist-to"]);
const vars = prepare({ persistTo });
const { child, base } = await startWorker(PORT, { vars: LOCAL_VARS, persistTo });
// A seed step that fails stops the worker too, rather than leaving it serving with nobody to stop it.
const { demo, sandbox, owner, demoGateway } = await seed().catch((error) => {
  child.kill();
  throw error;
});

async function seed() {
  const demo = await ensureAccount(base, vars.ADMIN_TOKEN, {
    email: "demo@example.com",
    plan: "pro",
    balance_usd: 500,
    topUpTo: 500,
    file: "demo-account.json",
    stateDir: persistTo,
  });

  const sandbox = await ensureSandboxKey(base, vars.ADMIN_TOKEN, demo.accountId, "demo-sandbox.json", persistTo);
  const owner = await ensureDemoOwner(base, vars.ADMIN_TOKEN, demo.accountId);

  const demoGateway = await startDemoGateway(base, {
    adminToken: vars.ADMIN_TOKEN,
    apiKey: demo.token,
    port: GATEWAY_PORT,
    nodes: GATEWAY_NODES,
  });
  return { demo, sandbox, owner, demoGateway };
}
const gatewayNodes = demoGateway.gateways.map((gateway) => `${gateway.nodeId} localhost:${gateway.port}`).join(", ");

const tick = setInterval(() => {
  fetch(`${base}/cdn-cgi/handler/scheduled?cron=${encodeURIComponent("* * * * *")}`).catch(() => {});
}, CRON_TICK_MS);

console.log(`
  Proxy Account API is running.

    Base URL   http://localhost:${PORT}/v1
    Docs       http://localhost:${PORT}/v1/docs
    Console    http://localhost:${PORT}/console/  (sign in with the API key below, or the sandbox key)
    OpenAPI    http://localhost:${PORT}/v1/openapi.json
    MCP        http://localhost:${PORT}/mcp  (Streamable HTTP; the API key as a bearer token)
    Account    ${demo.email} (${demo.accountId}), plan pro, balance topped up to $500
    API key    ${demo.token}
    Owner      ${owner.email} / ${owner.password}  (a member: signs in at /console, or POST /v1/auth/sign-in)
    Mail       invitations and password resets are printed here (and kept at GET /internal/dev/outbox)

  Try:  curl -H "Authorization: Bearer ${demo.token}" http://localhost:${PORT}/v1/users/me

  Sandbox key  ${sandbox.token}
    separate data, simulated money, livemode: false; test helpers under /v1/test-helpers (docs: Test helpers)

  Gateway    ${gatewayNodes} (HTTP, CONNECT, SOCKS5; usage reaches traffic within seconds)
    ${demoGateway.curl}
    ${demoGateway.sticky}

  Jobs: the Cron Trigger runs every ${CRON_TICK_MS / 1000} s here; ISP provisioning takes ${LOCAL_VARS.ISP_PROVISIONING_DELAY_S} s.
`);

const stopOutbox = printOutbox(base, vars.ADMIN_TOKEN);

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    clearInterval(tick);
    stopOutbox();
    for (const gateway of demoGateway.gateways) gateway.close();
    child.kill(signal);
  });
}
child.on("exit", (code) => process.exit(code ?? 0));

// `npm run dev`'s gateway demo: the local gateway's nodes (on :7777 and the ports after it unless told otherwise), and a
// sub-user of the demo account whose credentials work through them at once (the account holds residential and mobile
// bandwidth).
import { startLocalNode } from "../../gateway/local-node.ts";

const DEMO_LABEL = "demo-gateway";
const MIN_GB = 1;
const TOP_UP_GB = 5;

async function api(base, token, method, route, body) {
  const response = await fetch(`${base}/v1${route}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const payload = await response.json();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(payload)}`);
  return payload;
}

/** The demo sub-user with a fresh password (created the first time; rotated after, since passwords show once). */
async function demoSubuser(base, token) {
  for (const product of ["residential", "mobile"]) {
    const pool = await api(base, token, "GET", `/${product}/balance`);
    if (pool.gb_remaining < MIN_GB) await api(base, token, "POST", "/orders", { product, gb: TOP_UP_GB });
  }
  const found = await api(base, token, "GET", `/subusers?label_contains=${DEMO_LABEL}`);
  const existing = found.data.find((subuser) => subuser.label === DEMO_LABEL);
  if (!existing) {
    return api(base, token, "POST", "/subusers", { label: DEMO_LABEL, products: ["residential", "mobile"] });
  }
  const rotated = await api(base, token, "POST", `/subusers/${existing.id}/rotate-password`);
  return { ...existing, password: rotated.password };
}

/**
 * Starts `nodes` gateway nodes against the local API on consecutive ports from `port` (ids `node-1`, `node-2`, …) and
 * prepares the demo credentials; returns what to print.
 */
export async function startDemoGateway(base, { adminToken, apiKey, port, nodes = 1 }) {
  const gateways = [];
  for (let index = 0; index < nodes; index++) {
    gateways.push(
      // `npm run dev` keeps its state: each start replaces the credentials its nodes had.
      await startLocalNode({
        port: port + index,
        apiOrigin: base,
        adminToken,
        nodeId: `node-${index + 1}`,
        replace: true,
      }),
    );
  }
  const subuser = await demoSubuser(base, apiKey);
  const user = `user_${subuser.name}-type-res-region-us`;
  return {
    gateways,
    curl: `curl -x http://${user}:${subuser.password}@localhost:${port} ${base}/healthz`,
    sticky: `curl -i -x http://${user}-session-demo1-sesstime-10:${subuser.password}@localhost:${port} ${base}/healthz`,
  };
}

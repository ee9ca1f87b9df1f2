// The soak's gateway nodes (gateway/, in this process): started on consecutive ports, picked at random for each
// proxied request, and killed and restarted on the fault schedule.

import { sleep } from "../../../bench/http.mjs";
import { startLocalNode } from "../../../gateway/local-node.ts";

/** A node is told to stop taking requests, then waits at most this long for the ones it holds to finish. */
const QUIESCE_MS = 30_000;

/**
 * `count` nodes `soak-node-1`… on ports `port`, `port + 1`, … against the API at `base`, each with a credential of
 * its own (issued with `adminToken`, kept across restarts).
 */
export async function startFleet({ base, adminToken, port, count }) {
  const tokens = [];
  const start = async (index) => {
    const node = await startLocalNode({
      port: port + index,
      apiOrigin: base,
      adminToken,
      token: tokens[index] ?? null,
      nodeId: `soak-node-${index + 1}`,
    });
    tokens[index] = node.token;
    return node;
  };
  const nodes = [];
  for (let index = 0; index < count; index++) {
    nodes.push({ index, id: `soak-node-${index + 1}`, port: port + index, gateway: await start(index), up: true });
  }
  const inFlight = new Map(nodes.map((node) => [node, 0]));
  return {
    nodes,
    /**
     * Runs `task(node)` on a node that is up (a random one), counted as in flight there; null when none is up. A
     * killed node's requests are none: it is taken out first and killed once they finished, so every byte the
     * target served was reported by the node that carried it (the kill tests the API's side: a node's push
     * channel, slot and leases gone, a new process with the same id after).
     */
    async use(task) {
      const live = nodes.filter((node) => node.up);
      if (live.length === 0) return null;
      const node = live[Math.floor(Math.random() * live.length)];
      inFlight.set(node, inFlight.get(node) + 1);
      try {
        return await task(node);
      } finally {
        inFlight.set(node, inFlight.get(node) - 1);
      }
    },
    /** Kills node `index` (connections dropped, listeners closed, its usage sent) and restarts it after `downMs`. */
    async killAndRestart(index, downMs) {
      const node = nodes[index];
      node.up = false;
      const deadline = Date.now() + QUIESCE_MS;
      while (inFlight.get(node) > 0 && Date.now() < deadline) await sleep(50);
      const killedAt = Date.now();
      await node.gateway.close();
      await sleep(downMs);
      node.gateway = await start(index);
      node.up = true;
      return { node: node.id, killedAt, restartedAt: Date.now() };
    },
    /** Sends every node's waiting usage. */
    async drain() {
      await Promise.all(nodes.map((node) => node.gateway.usage.drain()));
    },
    async close() {
      await Promise.all(nodes.map((node) => node.gateway.close({ drainMs: 1000 })));
    },
  };
}

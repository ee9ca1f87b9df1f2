// The local development gateway: `node gateway/index.ts` (started by `npm run dev`).
// Env: GATEWAY_NODE_TOKEN (the node's own credential, issued by `POST /internal/admin/gateway-nodes` for
// GATEWAY_NODE_ID), GATEWAY_NODE_ID (node-<port>), GATEWAY_PORT (7777), GATEWAY_API_ORIGIN (http://127.0.0.1:8787),
// GATEWAY_USAGE_FLUSH_MS (1000).
import { randomBytes } from "node:crypto";
import { realpathSync } from "node:fs";
import type { AddressInfo, Server, Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { apiClient } from "./api-client.ts";
import { nodeDecider } from "./node-decider.ts";
import { createProxyServer } from "./proxy-server.ts";
import { usageReporter } from "./usage-reporter.ts";

export interface GatewayOptions {
  port?: number;
  apiOrigin: string;
  token: string;
  flushMs?: number;
  nodeId?: string | null;
}

/**
 * Starts one gateway node on 127.0.0.1 (and ::1 when the machine has it); resolves once it listens. `nodeId`: its
 * stable id towards the API (`[a-z0-9-]{1,64}`; `node-<port>` unless given, random on port 0); `token`: the node's
 * own credential, issued for that id (`local-node.ts` issues one for local tooling).
 */
export async function startGateway({ port = 7777, apiOrigin, token, flushMs = 1000, nodeId = null }: GatewayOptions) {
  const id = nodeId ?? `node-${port || randomBytes(4).toString("hex")}`;
  const api = apiClient({ origin: apiOrigin, token, nodeId: id });
  const usage = usageReporter(api, { flushMs });
  const decider = nodeDecider({ api });
  const clients = new Set<Socket>();
  const listen = (host: string, onPort: number) =>
    new Promise<Server>((resolve, reject) => {
      const server = createProxyServer({ decider, usage });
      server.on("connection", (socket: Socket) => {
        clients.add(socket);
        socket.once("close", () => clients.delete(socket));
      });
      server.once("error", reject);
      server.listen(onPort, host, () => resolve(server));
    });
  const portOf = (server: Server) => (server.address() as AddressInfo).port;
  const first = await listen("127.0.0.1", port);
  const servers = [first];
  // `localhost` may resolve to ::1 first: listen there too, on the same port, when the machine has IPv6.
  const ipv6 = await listen("::1", portOf(first)).catch(() => null);
  if (ipv6) servers.push(ipv6);
  return {
    port: portOf(first),
    nodeId: id,
    usage,
    /** The API calls the node made so far, per path. */
    apiCalls: api.calls,
    decider,
    /** Stops listening, closes open connections and sends the usage still waiting (for at most `drainMs`: the API may be gone). */
    async close({ drainMs = 5000 } = {}) {
      for (const server of servers) server.close();
      // Kept-alive connections and tunnels would hold the process open.
      for (const socket of clients) socket.destroy();
      decider.close();
      await Promise.race([usage.drain(), new Promise((resolve) => setTimeout(resolve, drainMs).unref())]);
    },
  };
}

export type Gateway = Awaited<ReturnType<typeof startGateway>>;

/**
 * Whether this file is the one Node was started with. `import.meta.main` says so from Node 22.18 and 24.2 only:
 * Node 23 and 24.0–24.1, which `engines` (>= 22.18) admits, lack it.
 */
function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isMain()) {
  const env = process.env;
  if (!env.GATEWAY_NODE_TOKEN) {
    throw new Error("GATEWAY_NODE_TOKEN is required: the node's credential (POST /internal/admin/gateway-nodes)");
  }
  const gateway = await startGateway({
    port: Number(env.GATEWAY_PORT ?? 7777),
    apiOrigin: env.GATEWAY_API_ORIGIN ?? "http://127.0.0.1:8787",
    token: env.GATEWAY_NODE_TOKEN,
    flushMs: Number(env.GATEWAY_USAGE_FLUSH_MS ?? 1000),
    nodeId: env.GATEWAY_NODE_ID ?? null,
  });
  console.log(`[gateway] ${gateway.nodeId} listening on localhost:${gateway.port} (HTTP, CONNECT, SOCKS5)`);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, async () => {
      await gateway.close();
      process.exit(0);
    });
  }
}

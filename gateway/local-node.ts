// Local tooling's way to start a node (`npm run dev`, the gateway tests, the bench, the soak): the node gets its own
// credential from the API's admin contract first, as an operator would issue it, then starts with it. A node run
// on its own takes its credential from the environment (`node gateway/index.ts`).
import type { route as issueRoute } from "../src/internal/admin/issue-gateway-node-credential.ts";
import type { route as listRoute } from "../src/internal/admin/list-gateway-node-credentials.ts";
import { type GatewayOptions, startGateway } from "./index.ts";
import type { AnswerOf } from "./wire.ts";

/**
 * Issues `node` a credential of its own (`node_…`) through the admin API at `apiOrigin`; `replace`: its earlier
 * credentials are revoked first (a local node started again on kept state).
 */
export async function issueNodeCredential({
  apiOrigin,
  adminToken,
  node,
  replace = false,
}: {
  apiOrigin: string;
  adminToken: string;
  node: string;
  replace?: boolean;
}): Promise<string> {
  const admin = async <T>(method: string, route: string, body?: object): Promise<T> => {
    const response = await fetch(`${apiOrigin}/internal/admin${route}`, {
      method,
      headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await response.json().catch(() => null)) as { code?: string } | null;
    if (!response.ok) throw new Error(`${method} ${route} for ${node}: ${response.status} ${answer?.code ?? ""}`);
    return answer as T;
  };
  if (replace) {
    const listed = `/gateway-nodes?node=${encodeURIComponent(node)}&limit=100`;
    const { data } = await admin<AnswerOf<typeof listRoute, 200>>("GET", listed);
    for (const credential of data.filter((found) => found.revoked_at === null)) {
      await admin("DELETE", `/gateway-nodes/${credential.id}`);
    }
  }
  return (await admin<AnswerOf<typeof issueRoute, 201>>("POST", "/gateway-nodes", { node })).token;
}

/**
 * Starts a node (see `startGateway`) with a credential of its own: the one given (`token`, e.g. a restarted node's),
 * or a new one issued with `adminToken`. The node's `token` is on the answer, for a restart.
 */
export async function startLocalNode({
  adminToken,
  token = null,
  replace = false,
  nodeId,
  ...options
}: Omit<GatewayOptions, "token" | "nodeId"> & {
  nodeId: string;
  adminToken?: string;
  token?: string | null;
  replace?: boolean;
}) {
  const credential =
    token ??
    (await issueNodeCredential({ apiOrigin: options.apiOrigin, adminToken: adminToken ?? "", node: nodeId, replace }));
  return { ...(await startGateway({ ...options, nodeId, token: credential })), token: credential };
}

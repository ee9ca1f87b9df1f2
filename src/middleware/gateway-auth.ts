import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { type NodeCaller, nodeForToken } from "../domain/gateway/node-credentials";
import type { AppEnv } from "../env";
import { timingSafeEqual } from "../platform/crypto";
import { ApiError } from "../platform/errors";
import { bearerToken } from "./bearer";

/**
 * Who calls the gateway contract: a node with its own credential (`node_…`, docs/gateway.md "Node identities"), or,
 * for one release, the fleet's shared `GATEWAY_TOKEN`, which the node contract's routes refuse (`callingNode`).
 */
export const gatewayAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearerToken(c);
  const node = token ? await nodeForToken(c.get("ctx"), token) : null;
  if (node) {
    c.set("gatewayCaller", node);
  } else if (token && c.env.GATEWAY_TOKEN && (await timingSafeEqual(token, c.env.GATEWAY_TOKEN))) {
    c.set("gatewayCaller", null);
  } else {
    throw new ApiError("unauthorized", "A gateway node's credential (or the gateway token) is required.");
  }
  await next();
});

/**
 * The node a call on the node contract speaks for: it must call with its own credential, and may name no other
 * node (403 `node_credential_required`, `node_mismatch`). Every lease, slot, session and feed claim is bound to it.
 */
export function callingNode(c: Context<AppEnv>, named: string): NodeCaller {
  const caller = c.get("gatewayCaller");
  if (!caller) throw new ApiError("node_credential_required");
  if (caller.node !== named) {
    throw new ApiError("node_mismatch", `This credential was issued for node ${caller.node}, not ${named}.`);
  }
  return caller;
}

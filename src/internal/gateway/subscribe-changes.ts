import { type RouteHandler, z } from "@hono/zod-openapi";
import { GatewayHubClient } from "../../durable-objects/gateway-hub";
import type { GatewayPush } from "../../durable-objects/gateway-hub/contract";
import type { AppEnv } from "../../env";
import { callingNode } from "../../middleware/gateway-auth";
import { ApiError } from "../../platform/errors";
import { internalRoute } from "../../platform/route-definitions";
import { nodeId } from "./node-fields";

/** Every message the API pushes, by its `type` (the hub's contract): a message added there must be described here. */
const pushes: Record<GatewayPush["type"], string> = {
  hello:
    '`{"type": "hello", "slot", "slots", "standing_after_ms"}`, the first message on a socket: the node\'s slot ' +
    "for standing shares (`slot: null`: every slot is held), the fleet's slots, and how long until no other node " +
    "can be using it",
  subuser:
    '`{"type": "subuser", "subuser": <GatewaySubuserSnapshot>}`, to every connected node within a second of any ' +
    "change a node decides from",
  session_ended: '`{"type": "session_ended", "name", "session"}`, to every connected node when a session is terminated',
  lease_cut:
    '`{"type": "lease_cut", "name", "product"}`, to one node: another node waits for capacity this node holds ' +
    "beyond its fair share; renew now",
};

export const route = internalRoute(
  {
    operationId: "subscribeGatewayChanges",
    method: "get",
    path: "/changes",
    tags: ["Gateway"],
    summary: "Changes pushed to a node (WebSocket)",
    description:
      "A WebSocket (`Upgrade: websocket`) on which the API pushes JSON messages: " +
      `${Object.values(pushes).join("; ")}. Send \`ping\` to be answered \`pong\`. A request that is not a ` +
      "WebSocket upgrade is 422.",
    request: {
      query: z.object({ node: nodeId() }),
      headers: z.object({ upgrade: z.literal("websocket").openapi({ description: "`websocket`." }) }),
    },
    errors: ["invalid_request"],
    responses: { 101: { description: "Switching to the WebSocket protocol." } },
  },
  "GatewayNode",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError("invalid_request", "This is a WebSocket endpoint: send `Upgrade: websocket`.");
  }
  const caller = callingNode(c, c.req.valid("query").node);
  const upgraded = await new GatewayHubClient(c.env).connect(c.req.raw, caller);
  // The hub's response has immutable headers; a copy takes the request id the app adds to every response.
  return new Response(null, { status: 101, webSocket: upgraded.webSocket }) as never;
};

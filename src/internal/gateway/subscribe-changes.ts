import { type RouteHandler, z } from "@hono/zod-openapi";
import { GatewayHubClient } from "../../durable-objects/gateway-hub";
import type { AppEnv } from "../../env";
import { callingNode } from "../../middleware/gateway-auth";
import { ApiError } from "../../platform/errors";
import { internalRoute } from "../../platform/route-definitions";
import { nodeId } from "./node-fields";

export const route = internalRoute(
  {
    operationId: "subscribeGatewayChanges",
    method: "get",
    path: "/changes",
    tags: ["Gateway"],
    summary: "Changes pushed to a node (WebSocket)",
    description:
      "A WebSocket (`Upgrade: websocket`) on which the API pushes, to every connected node, " +
      '`{"type": "subuser", "subuser": <GatewaySubuserSnapshot>}` within a second of any change a node decides ' +
      'from, and `{"type": "session_ended", "name", "session"}` when a session is terminated. Send `ping` to be ' +
      "answered `pong`. A request that is not a WebSocket upgrade is 422.",
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

import { type RouteHandler, z } from "@hono/zod-openapi";
import { openTail } from "../../domain/traffic/live-tail";
import { ACK_EVERY, channelCloses, MAX_TAILS, MAX_UNACKED, TAIL_SUBPROTOCOL } from "../../durable-objects/request-tail";
import type { AppEnv } from "../../env";
import { offeredSubprotocols } from "../../middleware/bearer";
import { ApiError } from "../../platform/errors";
import { idParam, token } from "../../platform/fields";
import { apiRoute } from "../../platform/route-definitions";
import { productSchema } from "../../resources/vocabulary";

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

export const route = apiRoute({
  operationId: "tailRequests",
  method: "get",
  path: "/{product}/requests/tail",
  tags: ["Traffic"],
  boundKeys: true,
  summary: "Live tail of the request log (WebSocket)",
  description:
    "A WebSocket (`Upgrade: websocket`) that streams the product's sampled requests as the gateway reports them, " +
    "within about 2 seconds, optionally filtered: the request log's entries with `product` and `error_code`, " +
    "sampled as the log is (every request under 100 a minute per gateway batch, a uniform sample above). A browser, " +
    "which cannot send `Authorization`, offers the subprotocols `tail` and `bearer.<API_KEY>`; the answer selects " +
    "`tail`. The server sends " +
    `\`{"type": "hello", "ack_every": ${ACK_EVERY}, "max_unacked": ${MAX_UNACKED}}\`, then ` +
    '`{"type": "request", "seq": n, "request": {...}}` per request (n counts from 1). Acknowledge with ' +
    `\`{"type": "ack", "seq": n}\` at least every ${ACK_EVERY} requests: a viewer ${MAX_UNACKED} requests behind ` +
    "is closed with code 1008. Send `ping` to be answered `pong`. " +
    `An account may have ${MAX_TAILS} tails open at once (409 \`tail_limit\`). A request that is not a WebSocket ` +
    "upgrade is answered 426 `websocket_required`. A tail lives no longer than the key that opened it: it closes " +
    "within a second with " +
    Object.values(channelCloses)
      .map(({ code, reason }) => `${code} \`${reason.split(":")[0]}\``)
      .join(", ") +
    " when the key is revoked, expires, has that token rotated away (at the end of the rotation's grace), or no " +
    "longer covers the product or `traffic:read`.",
  request: {
    params: z.object({ product: productSchema }),
    query: z.object({
      subuser: idParam("subuser").optional(),
      domain: token(HOSTNAME, 253, "must be a host name")
        .transform((domain) => domain.toLowerCase())
        .optional()
        .openapi({ description: "The target host or a parent domain of it (`example.com` takes `api.example.com`)." }),
      status: token(/^([1-5]xx|\d{1,3})$/, 3, "must be a status (404) or a class (4xx)")
        .optional()
        .openapi({ description: "An HTTP status returned to the client (`404`) or a class of them (`4xx`)." }),
      error_code: token(/^[a-z0-9_.-]{1,64}$/, 64)
        .optional()
        .openapi({ description: "The gateway's error code of failed requests (e.g. `upstream-timeout`)." }),
    }),
    headers: z.object({
      upgrade: token(/^[A-Za-z]{1,32}$/, 32)
        .optional()
        .openapi({ description: "`websocket`." }),
      "sec-websocket-protocol": token(/^[A-Za-z0-9._, -]{1,200}$/, 200)
        .optional()
        .openapi({ description: "A browser's key: `tail, bearer.<API_KEY>` (the answer selects `tail`)." }),
    }),
  },
  errors: ["invalid_request", "subuser_not_found", "subuser_scope_mismatch", "websocket_required", "tail_limit"],
  responses: { 101: { description: "Switching to the WebSocket protocol." } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") throw new ApiError("websocket_required");
  const { product } = c.req.valid("param");
  const { subuser, domain, status, error_code: errorCode } = c.req.valid("query");
  const webSocket = await openTail(c.get("ctx"), c.get("principal"), {
    product,
    subuserId: subuser,
    domain,
    status,
    errorCode,
  });
  // A server may select only a subprotocol the client offered; never the one carrying the key.
  const headers: Record<string, string> = offeredSubprotocols(c).includes(TAIL_SUBPROTOCOL)
    ? { "Sec-WebSocket-Protocol": TAIL_SUBPROTOCOL }
    : {};
  return new Response(null, { status: 101, webSocket, headers }) as never;
};

import { DurableObject } from "cloudflare:workers";

/**
 * The push channel to the gateway nodes: each node keeps one WebSocket open here, and every change a sub-user's
 * gate publishes is sent to every node. The sockets are accepted with the Hibernation API and pings are answered
 * without waking the object, so an idle channel costs no duration.
 */
export class GatewayHub extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** A node's WebSocket upgrade (the worker checked the gateway token and the node's id). */
  override async fetch(request: Request): Promise<Response> {
    const node = new URL(request.url).searchParams.get("node") ?? "";
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    // A node that reconnects replaces its older socket.
    for (const old of this.ctx.getWebSockets(node)) old.close(1000, "replaced");
    this.ctx.acceptWebSocket(server, [node]);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends `message` to every connected node, or to the nodes named; returns how many it reached. */
  publish(message: string, nodes?: string[]): number {
    let sent = 0;
    const sockets = nodes ? nodes.flatMap((node) => this.ctx.getWebSockets(node)) : this.ctx.getWebSockets();
    for (const socket of sockets) {
      try {
        socket.send(message);
        sent++;
      } catch {
        // a socket closing as we send: the node re-fetches what it holds when it reconnects
      }
    }
    return sent;
  }

  /** Nodes send nothing but pings (answered without waking); anything else is ignored. */
  override webSocketMessage(): void {}

  override webSocketClose(socket: WebSocket, code: number): void {
    socket.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
  }
}

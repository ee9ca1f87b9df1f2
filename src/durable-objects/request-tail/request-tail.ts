import { DurableObject } from "cloudflare:workers";
import {
  ACK_EVERY,
  MAX_TAILS,
  MAX_UNACKED,
  matchesFilter,
  type TailFilter,
  type TailRecord,
  TOO_SLOW,
} from "./contract";

/** The header the worker hands a tail's filter in (JSON), with the WebSocket upgrade. */
export const FILTER_HEADER = "X-Tail-Filter";

/** What a tail's socket carries through hibernation: its filter, records sent and acknowledged. */
interface TailSocket {
  filter: TailFilter;
  sent: number;
  acked: number;
}

/**
 * One account's live tails: the viewers' WebSockets, accepted with the Hibernation API (pings answered without
 * waking), each socket's filter and flow window in its attachment. The usage route hands it the account's sampled
 * records as they arrive (`deliver`); between deliveries the object sleeps and costs nothing. A viewer
 * `MAX_UNACKED` records behind its acknowledgements when more arrive is closed rather than buffered.
 */
export class RequestTail extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  /** A viewer's WebSocket upgrade (the worker checked the key and the filter): 409 past `MAX_TAILS`. */
  override async fetch(request: Request): Promise<Response> {
    const open = this.#openSockets().length;
    if (open >= MAX_TAILS) return Response.json({ open }, { status: 409 });
    const filter = JSON.parse(request.headers.get(FILTER_HEADER) ?? "null") as TailFilter;
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment({ filter, sent: 0, acked: 0 } satisfies TailSocket);
    server.send(JSON.stringify({ type: "hello", ack_every: ACK_EVERY, max_unacked: MAX_UNACKED }));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends each open tail the records its filter takes; answers how many tails are open. */
  deliver(records: TailRecord[]): number {
    for (const socket of this.#openSockets()) this.#send(socket, records);
    return this.#openSockets().length;
  }

  /** Acknowledgements (`{"type": "ack", "seq": n}`); anything else is ignored. */
  override webSocketMessage(socket: WebSocket, message: string | ArrayBuffer): void {
    const seq = typeof message === "string" ? ackedSeq(message) : null;
    const state = socket.deserializeAttachment() as TailSocket;
    if (seq === null || seq <= state.acked || seq > state.sent) return;
    socket.serializeAttachment({ ...state, acked: seq } satisfies TailSocket);
  }

  override webSocketClose(socket: WebSocket, code: number): void {
    closeQuietly(socket, code === 1005 || code === 1006 ? 1000 : code, "closed");
  }

  #openSockets(): WebSocket[] {
    return this.ctx.getWebSockets().filter((socket) => socket.readyState === WebSocket.OPEN);
  }

  /**
   * Sends a socket the records its filter takes, all of them: a delivery is one batch's sample, bounded. A viewer
   * still `MAX_UNACKED` records behind when more arrive is closed instead, so what waits for one is bounded too.
   */
  #send(socket: WebSocket, records: TailRecord[]): void {
    const state = socket.deserializeAttachment() as TailSocket;
    const matching = records.filter((record) => matchesFilter(state.filter, record));
    if (matching.length === 0) return;
    if (state.sent - state.acked >= MAX_UNACKED) {
      closeQuietly(socket, TOO_SLOW.code, TOO_SLOW.reason);
      return;
    }
    let { sent } = state;
    try {
      for (const record of matching) {
        sent++;
        socket.send(JSON.stringify({ type: "request", seq: sent, request: record }));
      }
      socket.serializeAttachment({ ...state, sent } satisfies TailSocket);
    } catch {
      // the viewer left while we sent: nothing more to tell it
    }
  }
}

/** The sequence number a client acknowledges, or null for any other message. */
function ackedSeq(message: string): number | null {
  try {
    const parsed = JSON.parse(message) as { type?: unknown; seq?: unknown };
    return parsed.type === "ack" && Number.isSafeInteger(parsed.seq) ? (parsed.seq as number) : null;
  } catch {
    return null;
  }
}

function closeQuietly(socket: WebSocket, code: number, reason: string): void {
  try {
    socket.close(code, reason);
  } catch {
    // already closed
  }
}

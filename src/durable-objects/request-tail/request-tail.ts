import { DurableObject } from "cloudflare:workers";
import { HOUR, now } from "../../platform/clock";
import {
  type ChannelCredential,
  channelCloses,
  channelDeadline,
  channelEnd,
  type KeyReview,
  reviewed,
} from "../shared/channel-credentials";
import {
  ACK_EVERY,
  MAX_TAILS,
  MAX_UNACKED,
  matchesFilter,
  type TailFilter,
  type TailRecord,
  TOO_SLOW,
  tailSubusers,
} from "./contract";

/** The header the worker hands a tail's filter in (JSON), with the WebSocket upgrade. */
export const FILTER_HEADER = "X-Tail-Filter";
/** The header the worker hands the opening key's credential in (JSON): the tail lives no longer than it. */
export const CREDENTIAL_HEADER = "X-Tail-Credential";

/** What a tail's socket carries through hibernation: its filter, its key's credential, records sent and acked. */
interface TailSocket {
  filter: TailFilter;
  credential: ChannelCredential;
  sent: number;
  acked: number;
}

/** A review of a key, kept so that a tail opened just after it (its request admitted before) is judged by it too. */
interface StoredReview {
  review: KeyReview;
  at: number;
}
const REVIEW_PREFIX = "review:";
/** Far longer than any request takes from its key's admission to its tail's opening. */
const REVIEW_KEPT_MS = HOUR;

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

  /**
   * A viewer's WebSocket upgrade (the worker checked the key and the filter): 409 past `MAX_TAILS`. A review of the
   * key that arrived since the request was admitted applies to the new tail at once.
   */
  override async fetch(request: Request): Promise<Response> {
    const open = this.#openSockets().length;
    if (open >= MAX_TAILS) return Response.json({ open }, { status: 409 });
    const filter = JSON.parse(request.headers.get(FILTER_HEADER) ?? "null") as TailFilter;
    let credential = JSON.parse(request.headers.get(CREDENTIAL_HEADER) ?? "null") as ChannelCredential;
    const stored = await this.ctx.storage.get<StoredReview>(REVIEW_PREFIX + credential.keyId);
    if (stored) credential = reviewed(credential, stored.review, filter.product, tailSubusers(filter));
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server, [credential.keyId]);
    server.serializeAttachment({ filter, credential, sent: 0, acked: 0 } satisfies TailSocket);
    server.send(JSON.stringify({ type: "hello", ack_every: ACK_EVERY, max_unacked: MAX_UNACKED }));
    await this.#endLapsed();
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends each open tail the records its filter takes; answers how many tails are open. */
  deliver(records: TailRecord[]): number {
    // A deadline that passed between alarms: the alarm stays set for the next one.
    this.#closeLapsed();
    for (const socket of this.#openSockets()) this.#send(socket, records);
    return this.#openSockets().length;
  }

  /**
   * A change of an API key (revoked, expired, rotated, rescoped): the tails it opened that the key no longer covers
   * close at once, the others take its new deadlines. Kept a while, for a tail whose opening is on its way.
   */
  async reviewKey(keyId: string, review: KeyReview): Promise<void> {
    const at = now();
    await this.ctx.storage.put(REVIEW_PREFIX + keyId, { review, at } satisfies StoredReview);
    for (const socket of this.ctx.getWebSockets(keyId)) {
      const state = socket.deserializeAttachment() as TailSocket;
      const credential = reviewed(state.credential, review, state.filter.product, tailSubusers(state.filter));
      socket.serializeAttachment({ ...state, credential } satisfies TailSocket);
    }
    await this.#endLapsed();
    await this.#forgetReviewsBefore(at - REVIEW_KEPT_MS);
  }

  /** A tail's credential ran out (its key's expiry, or a rotation's grace): it closes. */
  override async alarm(): Promise<void> {
    await this.#endLapsed();
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

  /** Closes the tails whose credential no longer holds, and sets the alarm for the next deadline (none: none). */
  async #endLapsed(): Promise<void> {
    const next = this.#closeLapsed();
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }

  /**
   * Closes every tail whose credential no longer holds, with its cause's close code; answers the next deadline
   * among the others (null: none).
   */
  #closeLapsed(): number | null {
    const at = now();
    let next: number | null = null;
    for (const socket of this.#openSockets()) {
      const { credential } = socket.deserializeAttachment() as TailSocket;
      const end = channelEnd(credential, at);
      if (end) {
        const { code, reason } = channelCloses[end];
        closeQuietly(socket, code, reason);
        continue;
      }
      const deadline = channelDeadline(credential);
      if (deadline !== null && (next === null || deadline < next)) next = deadline;
    }
    return next;
  }

  async #forgetReviewsBefore(before: number): Promise<void> {
    const reviews = await this.ctx.storage.list<StoredReview>({ prefix: REVIEW_PREFIX });
    const old = [...reviews].filter(([, stored]) => stored.at < before).map(([key]) => key);
    if (old.length > 0) await this.ctx.storage.delete(old);
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

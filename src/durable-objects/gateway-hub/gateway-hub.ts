import { DurableObject } from "cloudflare:workers";
import { now } from "../../platform/clock";
import { STANDING_GRACE_MS } from "../../platform/standing-shares";
import type { GatewayPush, NodeFrame, PongFrame } from "./contract";
import { gatewaySlots } from "./slots";

/** Who held a slot last, and when its socket closed (null: still open, or it vanished with an older instance). */
interface SlotHolder {
  node: string;
  freedAt: number | null;
}

/** What a node's socket carries through hibernation: its node, slot and the credential it was opened with. */
interface SocketTag {
  node: string;
  slot: number | null;
  credential?: string;
}

/** The headers the worker hands a node's identity in, from the credential it checked. */
export const NODE_HEADER = "X-Gateway-Node";
export const CREDENTIAL_HEADER = "X-Gateway-Node-Credential";
/** The close a node's feed gets when its credential is revoked. */
export const CREDENTIAL_REVOKED = { code: 4001, reason: "gateway_node_revoked: this node's credential was revoked" };

const SLOT_PREFIX = "slot:";
const slotKey = (slot: number) => `${SLOT_PREFIX}${slot}`;

/**
 * The push channel to the gateway nodes: each node keeps one WebSocket open here, and every change a sub-user's
 * gate publishes is sent to every node. The sockets are accepted with the Hibernation API and pings are answered
 * without waking the object, so an idle channel costs no duration.
 *
 * Each socket holds one of the fleet's node slots (docs/gateway.md, "Standing shares"), told to its node in a
 * `hello`. A slot is never held by two live nodes: one freed by another node is handed out again only once that
 * node has stopped using it (`STANDING_GRACE_MS` after its socket closed, or after this instance started when the
 * close went unseen).
 */
export class GatewayHub extends DurableObject {
  readonly #startedAt = now();
  /** Slots handed out whose sockets are not accepted yet: held all the same. */
  readonly #assigning = new Set<number>();

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(
      new WebSocketRequestResponsePair("ping" satisfies NodeFrame, "pong" satisfies PongFrame),
    );
  }

  /** A node's WebSocket upgrade (the worker checked the node's credential: the node and credential it names). */
  override async fetch(request: Request): Promise<Response> {
    const node = request.headers.get(NODE_HEADER) ?? "";
    const credential = request.headers.get(CREDENTIAL_HEADER) ?? "";
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    // A node that reconnects replaces its older socket, and keeps its slot.
    for (const old of this.ctx.getWebSockets(node)) old.close(1000, "replaced");
    const slot = await this.#assignSlot(node);
    this.ctx.acceptWebSocket(server, [node]);
    server.serializeAttachment({ node, slot: slot?.slot ?? null, credential } satisfies SocketTag);
    if (slot) this.#assigning.delete(slot.slot);
    const hello: GatewayPush = {
      type: "hello",
      slots: gatewaySlots(this.env),
      slot: slot?.slot ?? null,
      standing_after_ms: slot?.waitMs ?? 0,
    };
    server.send(JSON.stringify(hello));
    return new Response(null, { status: 101, webSocket: client });
  }

  /**
   * Sends `message` (a `GatewayPush`, as JSON) to every connected node, or to the nodes named. Returns how many it reached, and (sent to all)
   * by when every node has either read it or stopped using standing shares: a connected node stops once it reads
   * it, a node cut off stops a grace after its last pong; with no node connected, the last to have been connected.
   */
  async publish(message: string, nodes?: string[]): Promise<{ sent: number; standingEndsBy: number }> {
    let sent = 0;
    const sockets = nodes ? nodes.flatMap((node) => this.ctx.getWebSockets(node)) : this.ctx.getWebSockets();
    for (const socket of sockets) {
      try {
        socket.send(message);
        sent++;
      } catch {
        // a socket closing as we send: the node stops using standing shares, and re-fetches what it holds
      }
    }
    if (nodes) return { sent, standingEndsBy: 0 };
    if (this.ctx.getWebSockets().length > 0) return { sent, standingEndsBy: now() + STANDING_GRACE_MS };
    let lastHeld = 0;
    for (const holder of (await this.#holders()).values()) {
      lastHeld = Math.max(lastHeld, holder.freedAt ?? this.#startedAt);
    }
    return { sent, standingEndsBy: lastHeld === 0 ? 0 : lastHeld + STANDING_GRACE_MS };
  }

  /** Closes the feeds opened with a credential (revoked): their slots are freed as any closed socket's. */
  async disconnectCredential(credential: string): Promise<number> {
    let closed = 0;
    for (const socket of this.ctx.getWebSockets()) {
      if ((socket.deserializeAttachment() as SocketTag | null)?.credential !== credential) continue;
      await this.#freeSlot(socket);
      try {
        socket.close(CREDENTIAL_REVOKED.code, CREDENTIAL_REVOKED.reason);
      } catch {
        // already closing
      }
      closed++;
    }
    return closed;
  }

  /**
   * Whether `node` holds `slot` on an open feed now. A node that loses its slot keeps it for `STANDING_GRACE_MS`
   * after its socket closed before another may have it, so an answer stays true at least that long.
   */
  holdsSlot(node: string, slot: number): boolean {
    return this.ctx
      .getWebSockets(node)
      .some((socket) => (socket.deserializeAttachment() as SocketTag | null)?.slot === slot);
  }

  /** Nodes send nothing but pings (answered without waking); anything else is ignored. */
  override webSocketMessage(): void {}

  override async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    await this.#freeSlot(socket);
    socket.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
  }

  override async webSocketError(socket: WebSocket): Promise<void> {
    await this.#freeSlot(socket);
  }

  /**
   * The node's slot: the one it held before if free, else the free slot usable soonest (lowest first); null when
   * every slot is held. `waitMs`: how long until the slot's last holder has stopped using it.
   */
  async #assignSlot(node: string): Promise<{ slot: number; waitMs: number } | null> {
    const slots = gatewaySlots(this.env);
    const held = new Set<number>(this.#assigning);
    for (const socket of this.ctx.getWebSockets()) {
      const tag = socket.deserializeAttachment() as SocketTag | null;
      if (tag && tag.node !== node && tag.slot !== null) held.add(tag.slot);
    }
    const holders = await this.#holders();
    const at = now();
    let best: { slot: number; waitMs: number } | null = null;
    for (let slot = 0; slot < slots; slot++) {
      if (held.has(slot)) continue;
      const holder = holders.get(slotKey(slot));
      const stoppedBy = !holder || holder.node === node ? 0 : (holder.freedAt ?? this.#startedAt) + STANDING_GRACE_MS;
      const waitMs = Math.max(0, stoppedBy - at);
      if (holder?.node === node) {
        best = { slot, waitMs };
        break;
      }
      if (!best || waitMs < best.waitMs) best = { slot, waitMs };
    }
    if (!best) return null;
    // Taken before the next await: a node connecting meanwhile chooses among the others.
    this.#assigning.add(best.slot);
    await this.ctx.storage.put(slotKey(best.slot), { node, freedAt: null } satisfies SlotHolder);
    return best;
  }

  /** Who held each slot last, by `slotKey`. */
  #holders(): Promise<Map<string, SlotHolder>> {
    return this.ctx.storage.list<SlotHolder>({ prefix: SLOT_PREFIX });
  }

  async #freeSlot(socket: WebSocket): Promise<void> {
    const tag = socket.deserializeAttachment() as SocketTag | null;
    if (!tag || tag.slot === null) return;
    // A node that reconnected holds its slot on its new socket.
    const reconnected = this.ctx
      .getWebSockets(tag.node)
      .some((other) => other !== socket && (other.deserializeAttachment() as SocketTag | null)?.slot === tag.slot);
    if (reconnected) return;
    await this.ctx.storage.put(slotKey(tag.slot), { node: tag.node, freedAt: now() } satisfies SlotHolder);
  }
}

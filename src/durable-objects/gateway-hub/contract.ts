import type { GatewayProduct, NodeSnapshotOnWire } from "../subuser-gate/contract";

/**
 * The push channel between the API and the gateway nodes (docs/gateway.md, "Pushes"): every message each way. The
 * hub, the gates that publish through it and the nodes that read it hold to these. Pure types.
 */

/** What the API sends a node: JSON text frames, one message each. */
export type GatewayPush =
  /**
   * The first message on a socket (docs/gateway.md, "Standing shares"): the node's slot (null: every slot is held;
   * the node then leases everything), the fleet's slots, and how long until no other node can be using the slot.
   */
  | { type: "hello"; slots: number; slot: number | null; standing_after_ms: number }
  /** A sub-user changed: its snapshot, to every connected node. */
  | { type: "subuser"; subuser: NodeSnapshotOnWire }
  /** A sticky session was terminated (`session`: its `ses_` id), to every connected node. */
  | { type: "session_ended"; name: string; session: string }
  /** To one node: another node waits for capacity this node holds beyond its fair share; it renews at once. */
  | { type: "lease_cut"; name: string; product: GatewayProduct };

/** What a node sends: the text frame `ping`, every `STANDING_PING_MS`. Anything else is ignored. */
export type NodeFrame = "ping";

/** The hub's answer to a `ping`, a text frame sent without waking it: the node has read every push sent before. */
export type PongFrame = "pong";

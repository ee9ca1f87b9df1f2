import { SECOND } from "../../platform/clock";
import { standingShare } from "../../platform/standing-shares";

/**
 * Leased capacity: how a sub-user's gate splits one limit (`concurrent_max` or `rps_max` of a product) among the
 * gateway nodes that decide its requests. Pure: the gate keeps one per limit, in memory.
 *
 * The invariant: what the nodes may be using at any instant never sums past the limit. A node is counted, until
 * its lease ends, at the largest of: its grant; the share it reported enforcing (until it confirms a lower one:
 * an answer that cut it may have been lost); and what it reported in use — its open connections, or the requests
 * it admitted in its last rolling second (for the second after the report). Grants are split max-min fairly over
 * what the nodes want, so a node above its fair share is cut at its next renewal and the capacity goes to the
 * nodes that wait for it.
 */

/** A lease lasts this long while some node waits for capacity: a node that stops renewing gives it back by then. */
export const NODE_LEASE_MS = 5 * SECOND;
/**
 * A lease lasts this long while no node waits: a quiet sub-user costs a node one renewal a minute. When a node comes
 * to wait, the nodes above their fair share are asked (a push) to renew at once.
 */
export const QUIET_LEASE_MS = 60 * SECOND;
/** A node is asked to renew early at most this often. */
const CUT_EVERY_MS = SECOND;

export interface ShareRequest {
  node: string;
  /** The node's slot (null: none): its renewal stands for the slot's standing share, if one is still counted. */
  slot: number | null;
  /** The share the node enforces now. */
  held: number;
  /** What the node has in use: open connections, or the requests admitted in its last rolling second. */
  inUse: number;
  want: number;
}

/** A renewal's answer: the node's share until `expiresAt`, and the nodes to ask to renew early (they hold more). */
export interface ShareGrant {
  granted: number;
  expiresAt: number;
  cut: string[];
}

interface NodeShare {
  granted: number;
  held: number;
  inUse: number;
  inUseUntil: number;
  want: number;
  expiresAt: number;
  /** When it was last asked to renew early. */
  cutAt: number;
  /** A slot's standing share, counted until its node renews or every node has stopped using it. */
  standing: boolean;
}

const slotKey = (slot: number) => `slot ${slot}`;

export class NodeShares {
  readonly #nodes = new Map<string, NodeShare>();
  /** Until then (after a restart) the gate cannot know the grants it made before: it grants no more than is held. */
  readonly #recoveringUntil: number;
  /** How long a reported use counts: the lease for open connections, a second for requests. */
  readonly #inUseMs: number;

  /**
   * `startedAt`: when this instance started; `grantedBefore`: whether an instance before it may have made grants
   * that are still live (every one of them ends within a lease of the restart); `noted`: what the instance before
   * noted each node may be using (`counts`, at least), counted until the node renews or the lease has passed (null:
   * nothing noted, so no node is granted more than it holds until then).
   */
  constructor(options: {
    startedAt: number;
    inUseMs: number;
    grantedBefore: boolean;
    noted?: Record<string, number> | null;
  }) {
    const noted = options.grantedBefore ? (options.noted ?? null) : {};
    this.#recoveringUntil = noted === null ? options.startedAt + QUIET_LEASE_MS : options.startedAt;
    this.#inUseMs = options.inUseMs;
    for (const [node, bound] of Object.entries(noted ?? {})) {
      if (!(bound > 0)) continue;
      this.#nodes.set(node, {
        granted: bound,
        held: bound,
        inUse: 0,
        inUseUntil: 0,
        want: 0,
        expiresAt: options.startedAt + QUIET_LEASE_MS,
        cutAt: 0,
        standing: false,
      });
    }
  }

  /** The node's renewal: its new share, until when it holds, and the nodes to ask to renew early. */
  renew(limit: number, request: ShareRequest, at: number): ShareGrant {
    this.#expire(at);
    if (request.slot !== null) this.#nodes.delete(slotKey(request.slot));
    const held = clamp(request.held, limit);
    const share: NodeShare = {
      granted: held,
      held,
      inUse: clamp(request.inUse, limit),
      inUseUntil: at + this.#inUseMs,
      want: clamp(request.want, limit),
      expiresAt: at + NODE_LEASE_MS,
      cutAt: this.#nodes.get(request.node)?.cutAt ?? 0,
      standing: false,
    };
    this.#nodes.set(request.node, share);
    const available = limit - this.#countedOthers(request.node, at);
    const ceiling = at < this.#recoveringUntil ? held : Math.min(this.#fairShare(limit, request.node), available);
    share.granted = Math.max(0, Math.min(share.want, ceiling));
    const waiting = share.granted < share.want;
    if (!waiting && !this.#anyWaits()) share.expiresAt = at + QUIET_LEASE_MS;
    const cut = waiting ? this.#nodesToCut(limit, request.node, at) : [];
    if (share.want === 0 && countedOf(share, at) === 0) this.#nodes.delete(request.node);
    return { granted: share.granted, expiresAt: share.expiresAt, cut };
  }

  /** What every node may be using now, summed: never above the limit. */
  counted(at: number): number {
    this.#expire(at);
    let sum = 0;
    for (const share of this.#nodes.values()) sum += countedOf(share, at);
    return sum;
  }

  /**
   * What each node may be using now (standing shares aside; nodes at 0 left out): noted by the gate, a restart
   * counts each node at it until the node renews.
   */
  counts(at: number): Record<string, number> {
    this.#expire(at);
    const counts: Record<string, number> = {};
    for (const [node, share] of this.#nodes) {
      const counted = share.standing ? 0 : countedOf(share, at);
      if (counted > 0) counts[node] = counted;
    }
    return counts;
  }

  get nodes(): number {
    return this.#nodes.size;
  }

  /**
   * Standing shares end (the sub-user became busy): each slot's part of `limit` is counted as a grant to that slot
   * until its node renews, or until `confirmStandDown` says when every node has stopped using it.
   */
  standDown(limit: number, slots: number, name: string): void {
    for (let slot = 0; slot < slots; slot++) {
      const share = standingShare(limit, slots, slot, name);
      if (share === 0) continue;
      this.#nodes.set(slotKey(slot), {
        granted: share,
        held: share,
        inUse: 0,
        inUseUntil: 0,
        want: 0,
        expiresAt: Number.POSITIVE_INFINITY,
        cutAt: 0,
        standing: true,
      });
    }
  }

  /** Every node has read that standing shares ended, or stops using them by `until`. */
  confirmStandDown(until: number): void {
    for (const share of this.#nodes.values()) if (share.standing) share.expiresAt = Math.min(share.expiresAt, until);
  }

  /** When the last ended standing share stops being counted (null: none is). */
  standingUntil(at: number): number | null {
    this.#expire(at);
    let latest: number | null = null;
    for (const share of this.#nodes.values()) if (share.standing) latest = Math.max(latest ?? 0, share.expiresAt);
    return latest;
  }

  /** When the last share given ends (null: none is live): the gate may hand out standing shares again after. */
  liveUntil(at: number): number | null {
    this.#expire(at);
    if (at < this.#recoveringUntil) return this.#recoveringUntil;
    let latest: number | null = null;
    for (const share of this.#nodes.values()) latest = Math.max(latest ?? 0, share.expiresAt);
    return latest;
  }

  #anyWaits(): boolean {
    for (const share of this.#nodes.values()) if (share.granted < share.want) return true;
    return false;
  }

  /**
   * The other nodes counted above an even split, not asked in the last second: what they want may have fallen since
   * they last renewed (a node renews when it needs more, not when it needs less), so each is asked to say.
   */
  #nodesToCut(limit: number, node: string, at: number): string[] {
    const even = Math.floor(limit / this.#nodes.size);
    const cut: string[] = [];
    for (const [name, share] of this.#nodes) {
      if (name === node || share.standing || share.cutAt > at - CUT_EVERY_MS) continue;
      if (countedOf(share, at) > even) {
        share.cutAt = at;
        cut.push(name);
      }
    }
    return cut;
  }

  #countedOthers(node: string, at: number): number {
    let sum = 0;
    for (const [name, share] of this.#nodes) if (name !== node) sum += countedOf(share, at);
    return sum;
  }

  /** The node's part of a max-min fair split of `limit` over the nodes' wants (water-filling, smallest first). */
  #fairShare(limit: number, node: string): number {
    const waiting = [...this.#nodes].sort(([, a], [, b]) => a.want - b.want);
    let left = limit;
    for (let index = 0; index < waiting.length; index++) {
      const [name, share] = waiting[index] as [string, NodeShare];
      const given = Math.min(share.want, Math.floor(left / (waiting.length - index)));
      if (name === node) return given;
      left -= given;
    }
    return 0;
  }

  #expire(at: number): void {
    for (const [node, share] of this.#nodes) if (share.expiresAt <= at) this.#nodes.delete(node);
  }
}

function countedOf(share: NodeShare, at: number): number {
  if (share.expiresAt <= at) return 0;
  return Math.max(share.granted, share.held, share.inUseUntil > at ? share.inUse : 0);
}

function clamp(value: number, limit: number): number {
  return Math.max(0, Math.min(Number.isFinite(value) ? Math.floor(value) : 0, limit));
}

import { MINUTE, SECOND } from "../../platform/clock";
import type { Limits } from "../../platform/gateway-rules";
import type { GatewayProduct } from "./contract";
import { type ShareGrant as KindGrant, NodeShares, QUIET_LEASE_MS } from "./node-shares";

/**
 * How far past its longest lease the gate notes that grants may be live (a row written at most once per this).
 */
const GRANTS_NOTED_AHEAD_MS = MINUTE;
/**
 * A node's use is noted with this much room (the row is written again only when the node's use outgrows it): a
 * restart counts a node at its noted use until the node renews.
 */
const NOTED_ROOM = 1.5;

/** What each node may be using, per `product:kind` and node (see `NodeShares.counts`). */
type GrantBounds = Record<string, Record<string, number>>;

type Kind = "concurrent" | "rps";
const KINDS = ["concurrent", "rps"] as const;

/** One participant's renewal of its shares of a product's limits (a node, or the gate's per-connection path). */
export interface ParticipantRenewal {
  node: string;
  slot: number | null;
  held: Record<Kind, number>;
  inUse: Record<Kind, number>;
  want: Record<Kind, number>;
}

export interface Shares {
  concurrent: number | null;
  rps: number | null;
  expiresAt: number;
  /** The nodes to ask to renew early: they hold more than an even split while another waits. */
  cut: string[];
}

/**
 * A sub-user's limits split among everything that admits its requests: the gateway nodes, each deciding at the
 * node, and the gate's own per-connection path (`authorize`), which takes its part like a node. While the sub-user
 * is quiet, a product's limits are standing shares (each node slot uses its part without asking: docs/gateway.md,
 * "Standing shares"); the first renewal ends them (every node is told), and they stand again once every lease has
 * ended. Grants are noted in storage, so a restarted gate counts what an instance before it may have granted.
 */
export class ShareLeasing {
  readonly #sql: SqlStorage;
  readonly #slots: number;
  readonly #name: () => string;
  readonly #limits: (product: GatewayProduct) => Limits | null;
  /** Tells every node the current view; resolves with by when standing shares it ended are unused (null: not told). */
  readonly #tellNodes: () => Promise<number | null>;
  readonly #viewPushed: () => boolean;
  /** The products whose limits are leased (the sub-user is busy there); the others' limits stand. */
  readonly #leased = new Set<GatewayProduct>();
  /** Standing shares of a product being ended: renewals wait until every node was told. */
  readonly #standingDown = new Map<GatewayProduct, Promise<void>>();
  /** The shares of each `product:kind` limit (memory: a restart recovers as `NodeShares` says). */
  readonly #shares = new Map<string, NodeShares>();
  /** When this instance started: grants made before it are unknown until their leases have ended. */
  readonly #startedAt: number;
  /** Until when grants may be live, as stored: written ahead a minute at a time (one row a minute while busy). */
  #grantsLiveUntil: number;
  /** Whether an instance before this one may have granted shares still in force. */
  readonly #grantedBefore: boolean;
  /** What the instance before noted each node may be using (null: nothing noted, its grants are unknown). */
  readonly #notedBefore: GrantBounds | null;
  /** What the row notes now (null: nothing, while grants from an instance that noted nothing may be live). */
  #noted: GrantBounds | null;

  constructor(
    sql: SqlStorage,
    options: {
      startedAt: number;
      slots: number;
      name: () => string;
      limits: (product: GatewayProduct) => Limits | null;
      tellNodes: () => Promise<number | null>;
      viewPushed: () => boolean;
    },
  ) {
    this.#sql = sql;
    this.#startedAt = options.startedAt;
    this.#slots = options.slots;
    this.#name = options.name;
    this.#limits = options.limits;
    this.#tellNodes = options.tellNodes;
    this.#viewPushed = options.viewPushed;
    const grants = sql
      .exec<{ live_until: number; bounds: string | null }>("SELECT live_until, bounds FROM node_grants")
      .toArray()[0];
    this.#grantsLiveUntil = grants?.live_until ?? 0;
    this.#grantedBefore = this.#grantsLiveUntil > this.#startedAt;
    this.#notedBefore = !this.#grantedBefore ? {} : grants?.bounds ? (JSON.parse(grants.bounds) as GrantBounds) : null;
    this.#noted = this.#notedBefore;
  }

  /**
   * After a restart: the limited products whose limits the stored view did not say stand (`standing` null: a view
   * from before standing shares, whose limits were leased while grants may be live).
   */
  restore(limited: GatewayProduct[], standing: GatewayProduct[] | null): void {
    for (const product of limited) {
      if (standing ? !standing.includes(product) : this.#grantedBefore) this.#leased.add(product);
    }
  }

  /** Whether the product's limits are leased (so every participant renews its shares). */
  leased(product: GatewayProduct): boolean {
    return this.#leased.has(product);
  }

  /** The limited products whose limits stand (not leased). */
  standing(limited: GatewayProduct[]): GatewayProduct[] {
    return limited.filter((product) => !this.#leased.has(product));
  }

  /**
   * Ends a product's standing shares, if they stand: its limits are leased from now on, each slot's standing share
   * is counted until its node renews or has stopped using it, and every node is told. Concurrent callers wait for
   * the same end.
   */
  leaseFrom(product: GatewayProduct): Promise<void> {
    if (this.#leased.has(product) && !this.#standingDown.has(product)) return Promise.resolve();
    const ending = this.#standingDown.get(product);
    if (ending) return ending;
    this.#leased.add(product);
    for (const kind of KINDS) this.#standDownShares(product, kind);
    const told = this.#tellNodes()
      .then(() => undefined)
      .finally(() => this.#standingDown.delete(product));
    this.#standingDown.set(product, told);
    return told;
  }

  /** A participant's renewal: its shares of each limit the product has (null: no such limit). */
  renew(product: GatewayProduct, limits: Limits, renewal: ParticipantRenewal, at: number): Shares {
    const share = (kind: Kind): KindGrant | null => {
      const limit = limits[kind];
      if (limit === null) return null;
      return this.#nodeShares(product, kind).renew(
        limit,
        {
          node: renewal.node,
          slot: renewal.slot,
          held: renewal.held[kind],
          inUse: renewal.inUse[kind],
          want: renewal.want[kind],
        },
        at,
      );
    };
    const concurrent = share("concurrent");
    const rps = share("rps");
    // Noted before the answer leaves (nothing awaits in between): a restart knows every grant that may be live.
    this.#noteGrants(product, renewal.node, at);
    return {
      concurrent: concurrent?.granted ?? null,
      rps: rps?.granted ?? null,
      expiresAt: Math.min(concurrent?.expiresAt ?? at + QUIET_LEASE_MS, rps?.expiresAt ?? at + QUIET_LEASE_MS),
      cut: [...new Set([...(concurrent?.cut ?? []), ...(rps?.cut ?? [])])],
    };
  }

  /** Every node has read that standing shares ended, or stops using them by `until`. */
  confirmStandDown(until: number): void {
    for (const shares of this.#shares.values()) shares.confirmStandDown(until);
  }

  /** When the product's ended standing shares stop being counted (null: none is counted). */
  standingCountedUntil(product: GatewayProduct, at: number): number | null {
    const ends = KINDS.map((kind) => this.#shares.get(`${product}:${kind}`)?.standingUntil(at) ?? null);
    const counted = ends.filter((end): end is number => end !== null);
    return counted.length === 0 ? null : Math.max(...counted);
  }

  /**
   * Products whose every lease has ended get standing shares again (true: some did; the caller tells the nodes);
   * `wakeAt`: when the next may, if any is still leased.
   */
  standUp(at: number): { stood: boolean; wakeAt: number | null } {
    let stood = false;
    let wakeAt: number | null = null;
    for (const product of [...this.#leased]) {
      if (this.#standingDown.has(product)) continue;
      const lastEnds = Math.max(...KINDS.map((kind) => this.#nodeShares(product, kind).liveUntil(at) ?? 0));
      if (lastEnds > 0) {
        wakeAt = Math.min(wakeAt ?? lastEnds + 1, lastEnds + 1);
        continue;
      }
      this.#leased.delete(product);
      for (const kind of KINDS) this.#shares.delete(`${product}:${kind}`);
      stood = true;
    }
    return { stood, wakeAt };
  }

  #standDownShares(product: GatewayProduct, kind: Kind): void {
    const limit = this.#limits(product)?.[kind] ?? null;
    if (limit !== null) this.#nodeShares(product, kind).standDown(limit, this.#slots, this.#name());
  }

  #nodeShares(product: GatewayProduct, kind: Kind): NodeShares {
    const key = `${product}:${kind}`;
    let shares = this.#shares.get(key);
    if (!shares) {
      shares = new NodeShares({
        startedAt: this.#startedAt,
        inUseMs: kind === "rps" ? SECOND : QUIET_LEASE_MS,
        grantedBefore: this.#grantedBefore,
        noted: this.#notedBefore === null ? null : (this.#notedBefore[key] ?? {}),
      });
      this.#shares.set(key, shares);
      // Standing shares whose end no node may have heard of yet (this instance restarted meanwhile) still count.
      if (!this.#viewPushed() && this.#leased.has(product)) this.#standDownShares(product, kind);
    }
    return shares;
  }

  /**
   * Notes until when grants may be live (a lease and a minute ahead, so at most once a minute) and what each node may
   * be using of each limit, with room: written again when the renewing node's use outgrows what is noted.
   */
  #noteGrants(product: GatewayProduct, node: string, at: number): void {
    const extend = this.#grantsLiveUntil < at + QUIET_LEASE_MS;
    const outgrown = KINDS.some((kind) => {
      const key = `${product}:${kind}`;
      const counted = this.#shares.get(key)?.counts(at)[node] ?? 0;
      return this.#noted !== null && counted > (this.#noted[key]?.[node] ?? 0);
    });
    if (!extend && !outgrown) return;
    if (extend) this.#grantsLiveUntil = at + QUIET_LEASE_MS + GRANTS_NOTED_AHEAD_MS;
    // Grants of an instance that noted none may be live until a lease after this one started: nothing is noted then.
    const unknownBefore = this.#notedBefore === null && at < this.#startedAt + QUIET_LEASE_MS;
    this.#noted = unknownBefore ? null : this.#bounds(at);
    this.#sql.exec(
      "INSERT OR REPLACE INTO node_grants (id, live_until, bounds) VALUES (1, ?, ?)",
      this.#grantsLiveUntil,
      this.#noted === null ? null : JSON.stringify(this.#noted),
    );
  }

  /** What each node may be using of each limit, with room; an instance before's notes while they may be live. */
  #bounds(at: number): GrantBounds {
    const bounds: GrantBounds = {};
    if (this.#notedBefore !== null && at < this.#startedAt + QUIET_LEASE_MS) {
      for (const [key, nodes] of Object.entries(this.#notedBefore)) if (!this.#shares.has(key)) bounds[key] = nodes;
    }
    for (const [key, shares] of this.#shares) {
      const counts = Object.entries(shares.counts(at));
      if (counts.length > 0) {
        bounds[key] = Object.fromEntries(counts.map(([node, counted]) => [node, Math.ceil(counted * NOTED_ROOM)]));
      }
    }
    return bounds;
  }
}

// A node's shares of its sub-users' limits (docs/gateway.md, "Leases" and "Standing shares"): a quiet sub-user's
// standing share needs no call; a lease is asked for when a limited sub-user has no standing share or its demand
// outgrows its share (at most every 250 ms), renewed before it ends while in use (all due ones in one call), let end
// when unused, and renewed at once when the gate cuts it (another node waits) or ends standing shares.
import type { GatewayProduct } from "../src/durable-objects/subuser-gate/contract.ts";
import type { Limits } from "../src/platform/gateway-rules.ts";
import { SlidingLog } from "../src/platform/sliding-log.ts";
import type { ApiClient } from "./api-client.ts";
import { type Clock, realClock, type TimerHandle } from "./clock.ts";
import type { LeaseGrant, LeaseRenewal } from "./wire.ts";

const MAX_LEASES_PER_CALL = 100;
const PRODUCTS: GatewayProduct[] = ["residential", "mobile", "isp"];
const SECOND_MS = 1000;

/** What the node knows of one sub-user's product: its share, and the demand and use that ask for it. */
export class LeaseEntry {
  readonly name: string;
  readonly product: GatewayProduct;
  /** The sub-user's limits from its snapshot (null: none). */
  limits: Limits;
  /** The slot's standing share in force (`{concurrent, rps}`, null: unlimited), or null: none. */
  standing: Limits | null = null;
  /** The version of the sub-user's snapshot the node decides with, and the one it last asked for a lease at. */
  snapshotVersion = 0;
  leasedAtVersion = -1;
  /** The leased share: `{concurrent, rps}` (null: unlimited), valid until `expiresAt`. */
  grant: Limits | null = null;
  expiresAt = 0;
  version = 0;
  open = 0;
  /** Requests admitted in the last second (bounded by the rps share). */
  readonly admitted = new SlidingLog(SECOND_MS);
  /** Requests attempted in the last second, refused ones too: the rps demand. */
  readonly attempted = new SlidingLog(SECOND_MS);
  /** New connections refused for concurrency in the last second: they wait, and count as demand. */
  readonly waiting = new SlidingLog(SECOND_MS);
  /** New connections waiting for the entry's first share. */
  pending = 0;
  activeAt = 0;
  /** A call for this entry's share out of turn (its first, or to grow it): resolves once answered (or failed). */
  asking: Promise<void> | null = null;
  grewAt = -Infinity;
  /** A lowered share is being confirmed to the gate. */
  confirming = false;

  constructor(name: string, product: GatewayProduct, limits: Limits) {
    this.name = name;
    this.product = product;
    this.limits = limits;
  }

  live(now: number): boolean {
    return this.standing !== null || (this.grant !== null && now < this.expiresAt);
  }

  /** The share in force: the standing one, else the live lease's; null: none. */
  share(now: number): Limits | null {
    return this.standing ?? (this.live(now) ? this.grant : null);
  }
}

const keyOf = (name: string, product: string) => `${name}\n${product}`;
const lower = (share: number | null, held: number | null) => share !== null && held !== null && share < held;
/**
 * Demand with room to grow: a fifth more, and five. More room would have every node ask for more than the limit
 * whenever the sub-user is busy, and the gate then splits by fairness instead of demand (the fleet simulation:
 * twice the demand refused 3.7 % of requests while capacity sat idle, this 0.9 %).
 */
const withRoom = (demand: number) => Math.ceil(demand * 1.2) + 5;

export interface LeaseOptions {
  /** How often the shares in use are looked at for renewal. */
  renewEveryMs?: number;
  /** An entry with no open connection and no request for this long is idle. */
  idleMs?: number;
  /** A share counts from when its call left for at most this long. */
  maxLeaseMs?: number;
  /** A share in use is renewed this long before it ends. */
  renewBeforeMs?: number;
  /** A share outgrown by demand is grown at most this often. */
  growEveryMs?: number;
}

/**
 * `api.leases(list, slot)`: the API's `/leases` call. `slot()`: the node's slot while the change feed vouches for it
 * (null: none). `onVersion(name, version)`: a lease answered a gate version (the node's snapshot may be older).
 */
export class LeaseManager {
  #api: Pick<ApiClient, "leases">;
  #slot: () => number | null;
  #clock: Clock;
  #onVersion: (name: string, version: number) => void;
  #idleMs: number;
  #maxLeaseMs: number;
  #renewBeforeMs: number;
  #log: Pick<Console, "error">;
  #entries = new Map<string, LeaseEntry>();
  #timer: TimerHandle;
  #renewing = false;
  #failedAt = -Infinity;
  #growEveryMs: number;
  #queued: LeaseEntry[] = [];
  #queuedCall: Promise<void> | null = null;

  constructor({
    api,
    slot = () => null,
    clock = realClock,
    onVersion = () => {},
    renewEveryMs = 1000,
    idleMs = 2000,
    maxLeaseMs = 60_000,
    renewBeforeMs = 2500,
    growEveryMs = 250,
    log = console,
  }: {
    api: Pick<ApiClient, "leases">;
    slot?: () => number | null;
    clock?: Clock;
    onVersion?: (name: string, version: number) => void;
    log?: Pick<Console, "error">;
  } & LeaseOptions) {
    this.#api = api;
    this.#slot = slot;
    this.#clock = clock;
    this.#onVersion = onVersion;
    this.#idleMs = idleMs;
    this.#maxLeaseMs = maxLeaseMs;
    this.#renewBeforeMs = renewBeforeMs;
    this.#growEveryMs = growEveryMs;
    this.#log = log;
    this.#timer = clock.setInterval(() => this.renew(), renewEveryMs);
  }

  /** The entry of a limited sub-user's product (made on first use); `limits` from its current snapshot. */
  entry(name: string, product: GatewayProduct, limits: Limits): LeaseEntry {
    const key = keyOf(name, product);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = new LeaseEntry(name, product, limits);
      this.#entries.set(key, entry);
    }
    entry.limits = limits;
    entry.activeAt = this.#clock.now();
    return entry;
  }

  /** Resolves true once the entry holds a live share; false when none could be had (the API failed). */
  async ready(entry: LeaseEntry): Promise<boolean> {
    if (entry.live(this.#clock.now())) return true;
    // After a failed call, requests are refused for a second rather than each asking the API again.
    if (this.#clock.now() - this.#failedAt < SECOND_MS) return false;
    await this.#ask(entry);
    return entry.live(this.#clock.now());
  }

  /**
   * The entry's demand outgrew its share (`limit`: `"rps"` or `"concurrent"`): when the share is below the
   * sub-user's limit, asks for more at once rather than at the next renewal, at most every `growEveryMs`.
   * Resolves true once answered (the caller checks again), false when there is nothing to ask.
   */
  async grow(entry: LeaseEntry, limit: keyof Limits): Promise<boolean> {
    const now = this.#clock.now();
    const share = entry.share(now)?.[limit];
    const most = entry.limits[limit];
    if (share === null || share === undefined || most === null || share >= most) return false;
    if (now - entry.grewAt < this.#growEveryMs || now - this.#failedAt < SECOND_MS) return false;
    entry.grewAt = now;
    await this.#ask(entry);
    return true;
  }

  opened(entry: LeaseEntry): void {
    entry.open += 1;
    entry.activeAt = this.#clock.now();
  }

  closed(entry: LeaseEntry): void {
    entry.open -= 1;
    entry.activeAt = this.#clock.now();
  }

  /**
   * A sub-user's snapshot changed: `follow(entry)` updates each of its entries' standing share. One whose standing
   * share ended while in use renews at once, so the gate counts what it uses as its lease from then on.
   */
  restand(name: string, follow: (entry: LeaseEntry) => void): void {
    const now = this.#clock.now();
    for (const product of PRODUCTS) {
      const entry = this.#entries.get(keyOf(name, product));
      if (!entry) continue;
      const before = entry.standing;
      follow(entry);
      if (before !== null && entry.standing === null && !this.#idle(entry, now)) this.#ask(entry);
    }
  }

  /** The gate asks for a share back (another node waits): renewed at once, with what the node wants now. */
  cut(name: string, product: GatewayProduct): void {
    const entry = this.#entries.get(keyOf(name, product));
    if (entry?.grant) this.#ask(entry);
  }

  /**
   * Renews, in one call (1–100 per call), the shares in use that end within `renewBeforeMs`. A share no longer in
   * use is let end rather than given back by a call (a cut asks for it when another node waits).
   */
  async renew(): Promise<void> {
    if (this.#renewing || this.#entries.size === 0) return;
    this.#renewing = true;
    try {
      const now = this.#clock.now();
      const due: LeaseEntry[] = [];
      for (const [key, entry] of this.#entries) {
        if (entry.asking) continue;
        if (entry.standing !== null) {
          if (this.#idle(entry, now)) this.#entries.delete(key);
        } else if (this.#idle(entry, now)) {
          if (!entry.live(now)) this.#entries.delete(key);
        } else if (entry.expiresAt - now <= this.#renewBeforeMs) {
          due.push(entry);
        }
      }
      await this.#call(due);
    } finally {
      this.#renewing = false;
    }
  }

  stop(): void {
    this.#clock.clearInterval(this.#timer);
  }

  /** Asks for the entry's share now: all entries that ask in the same turn leave in one call. */
  #ask(entry: LeaseEntry): Promise<void> {
    if (entry.asking) return entry.asking;
    this.#queued.push(entry);
    this.#queuedCall ??= new Promise<void>((resolve) => this.#clock.setImmediate(resolve)).then(async () => {
      const batch = this.#queued;
      this.#queued = [];
      this.#queuedCall = null;
      try {
        await this.#call(batch);
      } finally {
        for (const asked of batch) asked.asking = null;
      }
    });
    entry.asking = this.#queuedCall;
    return entry.asking;
  }

  async #call(entries: LeaseEntry[]): Promise<void> {
    const now = this.#clock.now();
    for (let i = 0; i < entries.length; i += MAX_LEASES_PER_CALL) {
      const batch = entries.slice(i, i + MAX_LEASES_PER_CALL);
      const requests = batch.map((entry) => this.#request(entry, now));
      const givingBack = batch.map((entry) => entry.grant !== null && this.#idle(entry, now));
      let answer: Awaited<ReturnType<ApiClient["leases"]>>;
      try {
        answer = await this.#api.leases(requests, this.#slot());
      } catch (error) {
        // The shares held stay valid until they expire; past that the node refuses (fail closed).
        this.#log.error(`[gateway] lease renewal failed: ${(error as Error).message}`);
        this.#failedAt = this.#clock.now();
        continue;
      }
      const byKey = new Map(answer.leases.map((lease) => [keyOf(lease.name, lease.product), lease]));
      batch.forEach((entry, index) => {
        const lease = byKey.get(keyOf(entry.name, entry.product));
        if (lease) this.#take(entry, lease, { gaveBack: givingBack[index] === true, sentAt: now });
      });
    }
  }

  /**
   * An entry's renewal. From here the node uses no standing share of it until a newer snapshot grants them again:
   * the gate counts what the node reports here in place of its slot's standing share.
   */
  #request(entry: LeaseEntry, now: number): LeaseRenewal {
    const held = entry.share(now) ?? { concurrent: 0, rps: 0 };
    entry.standing = null;
    entry.leasedAtVersion = entry.snapshotVersion;
    return {
      name: entry.name,
      product: entry.product,
      held: { concurrent: held.concurrent ?? 0, rps: held.rps ?? 0 },
      open: entry.open,
      recent: entry.admitted.count(now),
      want: this.#want(entry, now),
    };
  }

  /**
   * What the last second asked for (requests attempted, refused ones too; connections open and waiting), with room
   * to grow. An idle entry asks for nothing.
   */
  #want(entry: LeaseEntry, now: number): LeaseRenewal["want"] {
    const { limits } = entry;
    if (entry.grant !== null && this.#idle(entry, now)) return { concurrent: 0, rps: 0 }; // given back
    const capped = (limit: number | null, demand: number) => (limit === null ? 0 : Math.min(limit, demand));
    return {
      concurrent: capped(limits.concurrent, withRoom(entry.open + entry.pending + entry.waiting.count(now))),
      rps: capped(limits.rps, withRoom(this.#rpsDemand(entry, now))),
    };
  }

  /** The last second's attempts, or the last quarter second's four times over when demand is rising. */
  #rpsDemand(entry: LeaseEntry, now: number): number {
    return Math.max(entry.attempted.count(now), 4 * entry.attempted.countSince(now, now - SECOND_MS / 4));
  }

  #idle(entry: LeaseEntry, now: number): boolean {
    return entry.open === 0 && now - entry.activeAt >= this.#idleMs;
  }

  #take(entry: LeaseEntry, lease: LeaseGrant, { gaveBack, sentAt }: { gaveBack: boolean; sentAt: number }): void {
    // No such sub-user at the gate (deleted, say): its snapshot is fetched again, which drops it.
    if (lease.known === false) this.#onVersion(entry.name, Number.POSITIVE_INFINITY);
    if (lease.version > entry.version) {
      entry.version = lease.version;
      this.#onVersion(entry.name, lease.version);
    }
    if (gaveBack) {
      // A later request asks for a share afresh; the entry goes unless one came meanwhile.
      entry.grant = null;
      entry.expiresAt = 0;
      if (this.#idle(entry, this.#clock.now())) this.#entries.delete(keyOf(entry.name, entry.product));
      return;
    }
    const held = entry.live(this.#clock.now()) ? entry.grant : null;
    entry.grant = { concurrent: lease.concurrent, rps: lease.rps };
    // Counted from when the call left, so the node's share ends no later than the gate thinks.
    entry.expiresAt = Math.min(Date.parse(lease.expires_at), sentAt + this.#maxLeaseMs);
    // A lowered share is confirmed at once, so the gate stops counting what the node gave up (another node waits).
    const lowered =
      held !== null && (lower(entry.grant.concurrent, held.concurrent) || lower(entry.grant.rps, held.rps));
    if (lowered && !entry.confirming) {
      entry.confirming = true;
      this.#clock.setImmediate(() => this.#ask(entry).finally(() => (entry.confirming = false)));
    }
  }
}

// A node's shares of its sub-users' limits (docs/gateway.md, "Leases" and "Standing shares"): a quiet sub-user's
// standing share needs no call; a lease is asked for when a limited sub-user has no standing share or its demand
// outgrows its share, renewed before it ends while in use, given back early once demand fell well below it, let end
// when unused, and renewed at once when the gate cuts it or ends standing shares. Every call asked for in one turn
// leaves as one `/leases` call.
import type { GatewayProduct } from "../src/durable-objects/subuser-gate/contract.ts";
import type { Limits } from "../src/platform/gateway-rules.ts";
import { SlidingLog } from "../src/platform/sliding-log.ts";
import type { ApiClient } from "./api-client.ts";
import { type Clock, realClock, type TimerHandle } from "./clock.ts";
import type { LeaseGrant, LeaseRenewal } from "./wire.ts";

const MAX_LEASES_PER_CALL = 100;
const PRODUCTS: GatewayProduct[] = ["residential", "mobile", "isp"];
const SECOND_MS = 1000;
const QUARTER_MS = SECOND_MS / 4;
/**
 * A node with no slot asks for its demand with this much room more. A node with a slot (one of a fleet sharing the
 * limits) asks for no fixed room, but keeps at least this much of a limit while in use (at most its slot's standing
 * part of it, so that the fleet's minimums together stay within the limit): small shares that change by a unit or
 * two each cost a call, and often a row at the gate.
 */
const FIXED_ROOM = 5;
/**
 * A node with a slot reads a rise off the last quarter second only once it holds this many requests (or new
 * connections): fewer say little of a rate, and the fleet's nodes together would ask for many times the demand.
 */
const RISE_FROM = 4;
/** The fleet's node slots until a standing share shows its split (`GATEWAY_SLOTS`' default). */
const DEFAULT_SLOTS = 64;
/**
 * A share is given back early by at least this many times its square root: the number of requests (or connections)
 * arriving at random in a while swings by about its square root, and a smaller give-back would be asked for again.
 */
const SWING = 4;
/** Connections' hold time is estimated only from a second with at least this many new ones. */
const HOLD_SAMPLE_MIN = 8;

type Shares = { concurrent: number; rps: number };
const NOTHING: Shares = { concurrent: 0, rps: 0 };
const KINDS = ["concurrent", "rps"] as const;
const keyOf = (name: string, product: string) => `${name}\n${product}`;
/** A share capped at `most` (a null share is unlimited: so is the limit, and nothing is asked of it). */
const atMost = (share: number | null, most: number) => (share === null ? null : Math.min(share, most));
const below = (share: number | null, than: number) => share !== null && share < than;

/** What the node knows of one sub-user's product: its share, and the demand and use that ask for it. */
export class LeaseEntry {
  readonly name: string;
  readonly product: GatewayProduct;
  /** The sub-user's limits from its snapshot (null: none). */
  limits: Limits;
  #standing: Limits | null = null;
  readonly #stood: (limits: Limits, standing: Limits) => void;
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
  /** New connections admitted in the last second. */
  readonly opened = new SlidingLog(SECOND_MS);
  /** How long a connection stays open (ms), estimated (open ÷ new a second, smoothed); null: not yet. */
  holdMs: number | null = null;
  /** New connections waiting for the entry's first share. */
  pending = 0;
  activeAt = 0;
  /** A call for this entry's share under way: resolves once answered (or failed). */
  asking: Promise<void> | null = null;
  grewAt = -Infinity;
  /** A lowered share is being confirmed to the gate. */
  confirming = false;

  /** `stood(limits, standing)`: told each standing share the entry is given (the fleet's split shows in it). */
  constructor(
    name: string,
    product: GatewayProduct,
    limits: Limits,
    stood: (limits: Limits, standing: Limits) => void = () => {},
  ) {
    this.name = name;
    this.product = product;
    this.limits = limits;
    this.#stood = stood;
  }

  /** The slot's standing share in force (`{concurrent, rps}`, null: unlimited), or null: none. */
  get standing(): Limits | null {
    return this.#standing;
  }

  set standing(standing: Limits | null) {
    this.#standing = standing;
    if (standing) this.#stood(this.limits, standing);
  }

  live(now: number): boolean {
    return this.standing !== null || (this.grant !== null && now < this.expiresAt);
  }

  /** The share in force: the standing one, else the live lease's; null: none. */
  share(now: number): Limits | null {
    return this.standing ?? (this.live(now) ? this.grant : null);
  }
}

export interface LeaseOptions {
  /** How often the shares are looked at: renewed when they end soon, given back when demand fell well below. */
  renewEveryMs?: number;
  /** An entry with no open connection and no request for this long is idle (its share is let end). */
  idleMs?: number;
  /** A share counts from when its call left for at most this long. */
  maxLeaseMs?: number;
  /** A share in use is renewed this long before it ends. */
  renewBeforeMs?: number;
  /** A share outgrown by demand is grown at most this often. */
  growEveryMs?: number;
  /** The room asked above demand: this share of it more. */
  roomShare?: number;
  /**
   * A node with a slot gives a share back early (renews it, asking for its demand) once what it would ask falls
   * below this share of it (0: never early).
   */
  giveBackBelow?: number;
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
  #growEveryMs: number;
  /** `roomShare` in thousandths: room in whole numbers, free of binary fractions (200 × 1.1 is not 220). */
  #roomPerMille: number;
  #giveBackBelow: number;
  #log: Pick<Console, "error">;
  #entries = new Map<string, LeaseEntry>();
  #timer: TimerHandle;
  #failedAt = -Infinity;
  #queued: LeaseEntry[] = [];
  #queuedCall: Promise<void> | null = null;
  /** A slot's standing part of the largest limit seen standing: the fleet's split (≈ limit ÷ slots). */
  #fleetPart: { limit: number; part: number } | null = null;

  constructor({
    api,
    slot = () => null,
    clock = realClock,
    onVersion = () => {},
    renewEveryMs = 250,
    idleMs = 6000,
    maxLeaseMs = 60_000,
    renewBeforeMs = 2500,
    growEveryMs = 50,
    roomShare = 0.1,
    giveBackBelow = 0.7,
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
    this.#roomPerMille = Math.round(roomShare * 1000);
    this.#giveBackBelow = giveBackBelow;
    this.#log = log;
    this.#timer = clock.setInterval(() => this.renew(), renewEveryMs);
  }

  /** The entry of a limited sub-user's product (made on first use); `limits` from its current snapshot. */
  entry(name: string, product: GatewayProduct, limits: Limits): LeaseEntry {
    const key = keyOf(name, product);
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = new LeaseEntry(name, product, limits, (stood, standing) => this.#learnSplit(stood, standing));
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
   * sub-user's limit, asks for more at once rather than at the next renewal, at most every `growEveryMs`; a call
   * already under way for the entry is waited for instead. Resolves true once answered (the caller checks again),
   * false when there is nothing to ask.
   */
  async grow(entry: LeaseEntry, limit: keyof Limits): Promise<boolean> {
    const now = this.#clock.now();
    const share = entry.share(now)?.[limit];
    const most = entry.limits[limit];
    if (share === null || share === undefined || most === null || share >= most) return false;
    if (entry.asking) {
      await entry.asking;
      // The answer may have taken the share back (the entry was idle when the call left): it is asked for afresh.
      if (!entry.live(this.#clock.now())) await this.ready(entry);
      return true;
    }
    if (now - entry.grewAt < this.#growEveryMs || now - this.#failedAt < SECOND_MS) return false;
    entry.grewAt = now;
    await this.#ask(entry);
    return true;
  }

  opened(entry: LeaseEntry): void {
    entry.open += 1;
    entry.activeAt = this.#clock.now();
    entry.opened.add(entry.activeAt);
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
   * Looks at the shares (every `renewEveryMs`): renews, all in one call (1–100 per call), those in use that end
   * within `renewBeforeMs`, and gives back early those in use that demand fell well below (`giveBackBelow`, a
   * node with a slot). A share no longer in use is let end rather than given back by a call (a cut asks for it
   * when another node waits).
   */
  async renew(): Promise<void> {
    const now = this.#clock.now();
    const asked: Promise<void>[] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.asking) continue;
      this.#sampleHold(entry, now);
      if (entry.standing !== null) {
        if (this.#idle(entry, now)) this.#entries.delete(key);
      } else if (this.#idle(entry, now)) {
        if (!entry.live(now)) this.#entries.delete(key);
      } else if (entry.expiresAt - now <= this.#renewBeforeMs || this.#givesBack(entry, now)) {
        asked.push(this.#ask(entry));
      }
    }
    await Promise.all(asked);
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
      const givingBack = batch.map((entry) => entry.grant !== null && this.#idle(entry, now));
      const requests = batch.map((entry) => this.#request(entry, now));
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
        const request = requests[index] as LeaseRenewal;
        if (lease) this.#take(entry, lease, { gaveBack: givingBack[index] === true, sentAt: now, held: request.held });
      });
    }
  }

  /**
   * An entry's renewal. From here the node uses no standing share of it until a newer snapshot grants them again:
   * the gate counts what the node reports here in place of its slot's standing share. A share larger than what is
   * asked for is lowered before the call leaves, so the `held` reported (which the gate counts until the node
   * reports less) is what the node enforces from then on; a standing share ends when the call leaves (requests wait
   * for the answer), so no more of it than is asked for is reported.
   */
  #request(entry: LeaseEntry, now: number): LeaseRenewal {
    const standing = entry.standing;
    const lease = standing === null && entry.live(now) ? entry.grant : null;
    entry.standing = null;
    entry.leasedAtVersion = entry.snapshotVersion;
    const want = this.#want(entry, now);
    if (lease)
      entry.grant = { concurrent: atMost(lease.concurrent, want.concurrent), rps: atMost(lease.rps, want.rps) };
    const held = standing ?? (lease ? entry.grant : null);
    return {
      name: entry.name,
      product: entry.product,
      held: {
        concurrent: Math.min(held?.concurrent ?? 0, want.concurrent),
        rps: Math.min(held?.rps ?? 0, want.rps),
      },
      open: entry.open,
      recent: entry.admitted.count(now),
      want,
    };
  }

  /**
   * What the node asks for: the last second's demand (requests attempted, refused ones too; connections open and
   * waiting, or arriving times their hold time), with room to grow: a tenth more, and 5 more for a node with no
   * slot; a node with a slot asks for at least one more, and keeps at least its minimum (`FIXED_ROOM`, at most its
   * slot's standing part). An idle entry asks for nothing (a lease it holds is given back).
   */
  #want(entry: LeaseEntry, now: number): Shares {
    if (entry.grant !== null && this.#idle(entry, now)) return NOTHING;
    const inFleet = this.#slot() !== null;
    const demand: Shares = { concurrent: this.#connectionDemand(entry, now), rps: this.#rising(entry.attempted, now) };
    const want = { ...NOTHING };
    for (const kind of KINDS) {
      const limit = entry.limits[kind];
      if (limit === null) continue;
      const asked = demand[kind] + Math.ceil((demand[kind] * this.#roomPerMille) / 1000) + (inFleet ? 0 : FIXED_ROOM);
      const least = inFleet ? Math.max(demand[kind] + 1, Math.min(FIXED_ROOM, this.#part(limit))) : 0;
      want[kind] = Math.min(limit, Math.max(asked, least));
    }
    return want;
  }

  /**
   * Open connections, those waiting for a first share and those refused in the last second; at least the new
   * connections a second (read as requests are) times their hold time, once that is known.
   */
  #connectionDemand(entry: LeaseEntry, now: number): number {
    const counted = entry.open + entry.pending + entry.waiting.count(now);
    if (entry.holdMs === null) return counted;
    const arriving = this.#rising(entry.opened, now) + entry.waiting.count(now);
    return Math.max(counted, Math.ceil((arriving * entry.holdMs) / SECOND_MS));
  }

  /**
   * Events a second: the last second's, or the last quarter second's four times over when they are rising (for a
   * node with a slot, once the quarter second holds `RISE_FROM`).
   */
  #rising(log: SlidingLog, now: number): number {
    const quarter = log.countSince(now, now - QUARTER_MS);
    const from = this.#slot() === null ? 1 : RISE_FROM;
    return Math.max(log.count(now), quarter >= from ? 4 * quarter : 0);
  }

  /** Folds the last second's open connections ÷ new connections into the hold time's estimate (Little's law). */
  #sampleHold(entry: LeaseEntry, now: number): void {
    const opened = entry.opened.count(now);
    if (opened < HOLD_SAMPLE_MIN) return;
    const sample = (entry.open / opened) * SECOND_MS;
    entry.holdMs = entry.holdMs === null ? sample : 0.75 * entry.holdMs + 0.25 * sample;
  }

  /** A slot's standing part of a limit: as the standing shares used show the fleet's split, else at 64 slots. */
  #part(limit: number): number {
    const split = this.#fleetPart ?? { limit: DEFAULT_SLOTS, part: 1 };
    return Math.floor((limit * split.part) / split.limit);
  }

  /** A standing share was given: the fleet's split, from the largest limit seen (the most precise). */
  #learnSplit(limits: Limits, standing: Limits): void {
    for (const kind of KINDS) {
      const limit = limits[kind];
      const part = standing[kind];
      if (limit === null || part === null || limit <= 0) continue;
      if (this.#fleetPart === null || limit >= this.#fleetPart.limit) this.#fleetPart = { limit, part };
    }
  }

  /**
   * A node with a slot gives back a live lease once what it would ask for fell below `giveBackBelow` of it (in
   * either limit), by at least `SWING` times the share's square root: less is the swing of random arrivals, and
   * would be asked for again soon.
   */
  #givesBack(entry: LeaseEntry, now: number): boolean {
    const lease = entry.grant;
    if (this.#giveBackBelow <= 0 || lease === null || this.#slot() === null || !entry.live(now)) return false;
    const want = this.#want(entry, now);
    return KINDS.some((kind) => {
      const share = lease[kind];
      if (share === null) return false;
      return want[kind] < share * this.#giveBackBelow && share - want[kind] >= SWING * Math.sqrt(share);
    });
  }

  #idle(entry: LeaseEntry, now: number): boolean {
    return entry.open === 0 && now - entry.activeAt >= this.#idleMs;
  }

  #take(
    entry: LeaseEntry,
    lease: LeaseGrant,
    { gaveBack, sentAt, held }: { gaveBack: boolean; sentAt: number; held: Shares },
  ): void {
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
    entry.grant = { concurrent: lease.concurrent, rps: lease.rps };
    // Counted from when the call left, so the node's share ends no later than the gate thinks.
    entry.expiresAt = Math.min(Date.parse(lease.expires_at), sentAt + this.#maxLeaseMs);
    // A share granted below what was reported held is confirmed at once, so the gate stops counting what the node
    // gave up (another node waits).
    const lowered = below(lease.concurrent, held.concurrent) || below(lease.rps, held.rps);
    if (lowered && !entry.confirming) {
      entry.confirming = true;
      this.#clock.setImmediate(() => this.#ask(entry).finally(() => (entry.confirming = false)));
    }
  }
}

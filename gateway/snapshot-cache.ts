// The sub-users a node has met: their snapshots (fetched in batches, replaced by pushes) and, for a while, the
// names that have none.
import { type Clock, realClock } from "./clock.ts";
import type { SubuserSnapshot, SubusersAnswer } from "./wire.ts";

const MAX_NAMES_PER_CALL = 100;

/** A held snapshot: when a fetch or a push last confirmed it, and when a request last used it. */
interface Held {
  snapshot: SubuserSnapshot;
  confirmedAt: number;
  usedAt: number;
}

/**
 * `fetch(names)`: the API's `/subusers` call. `onChange(name)`: a name's snapshot is new, replaced or dropped (its open
 * connections need a re-check). A snapshot is fresh while the change feed is connected, or for `staleMs` after it
 * was last confirmed (by a fetch or a push).
 */
export class SnapshotCache {
  #fetch: (names: string[]) => Promise<SubusersAnswer>;
  #onChange: (name: string) => void;
  #clock: Clock;
  #staleMs: number;
  #unknownTtlMs: number;
  #maxUnknown: number;
  #held = new Map<string, Held>();
  /** Names with no sub-user, until when that answer holds. */
  #unknown = new Map<string, number>();
  /** Names asked for and not yet answered: the promise each caller shares. */
  #waiting = new Map<string, PromiseWithResolvers<SubuserSnapshot | null>>();
  #queued: string[] = [];
  #feedConnected = false;
  #feedLostAt = 0;

  constructor({
    fetch,
    onChange = () => {},
    clock = realClock,
    staleMs = 30_000,
    unknownTtlMs = 60_000,
    maxUnknown = 10_000,
  }: {
    fetch: (names: string[]) => Promise<SubusersAnswer>;
    onChange?: (name: string) => void;
    clock?: Clock;
    staleMs?: number;
    unknownTtlMs?: number;
    maxUnknown?: number;
  }) {
    this.#fetch = fetch;
    this.#onChange = onChange;
    this.#clock = clock;
    this.#staleMs = staleMs;
    this.#unknownTtlMs = unknownTtlMs;
    this.#maxUnknown = maxUnknown;
  }

  /** The snapshot of `name`, or null for an unknown name; rejects when the API cannot be asked. */
  get(name: string): Promise<SubuserSnapshot | null> {
    const held = this.#held.get(name);
    if (held) {
      held.usedAt = this.#clock.now();
      return Promise.resolve(held.snapshot);
    }
    const unknownUntil = this.#unknown.get(name);
    if (unknownUntil !== undefined && unknownUntil > this.#clock.now()) return Promise.resolve(null);
    const waiting = this.#waiting.get(name);
    if (waiting) return waiting.promise;
    const entry = Promise.withResolvers<SubuserSnapshot | null>();
    this.#waiting.set(name, entry);
    this.#queued.push(name);
    // Names asked for in the same turn leave in one call.
    if (this.#queued.length === 1) this.#clock.setImmediate(() => this.#sendQueued());
    return entry.promise;
  }

  /** The held snapshot (no fetch), or null. */
  peek(name: string): SubuserSnapshot | null {
    return this.#held.get(name)?.snapshot ?? null;
  }

  /** Whether the name's snapshot is held or being fetched (a push for it must not be lost). */
  has(name: string): boolean {
    return this.#held.has(name) || this.#waiting.has(name);
  }

  /** False for a snapshot not confirmed for `staleMs` while the change feed was down. */
  fresh(name: string): boolean {
    const held = this.#held.get(name);
    if (!held) return false;
    if (this.#feedConnected) return true;
    return this.#clock.now() - Math.max(held.confirmedAt, this.#feedLostAt) < this.#staleMs;
  }

  /** The change feed's state: while it is connected, every held snapshot is current. */
  feedConnected(connected: boolean): void {
    if (this.#feedConnected && !connected) this.#feedLostAt = this.#clock.now();
    this.#feedConnected = connected;
  }

  get isFeedConnected(): boolean {
    return this.#feedConnected;
  }

  /** Takes a snapshot from a push or a fetch; an older version than the one held is ignored (but confirms it). */
  apply(snapshot: SubuserSnapshot): void {
    const { name } = snapshot;
    this.#unknown.delete(name);
    const held = this.#held.get(name);
    if (held && held.snapshot.version > snapshot.version) {
      held.confirmedAt = this.#clock.now();
      return;
    }
    const changed = !held || held.snapshot.version !== snapshot.version;
    this.#held.set(name, { snapshot, confirmedAt: this.#clock.now(), usedAt: held?.usedAt ?? this.#clock.now() });
    if (changed) this.#onChange(name);
  }

  /** Forgets a name's unknown answer (a push named it: it may have been created since). */
  forgetUnknown(name: string): void {
    this.#unknown.delete(name);
  }

  /** Fetches `names` again (all held ones by default); resolves when answered, rejects when the API failed. */
  async refresh(names: string[] = [...this.#held.keys()]): Promise<void> {
    for (let i = 0; i < names.length; i += MAX_NAMES_PER_CALL) {
      this.#take(await this.#fetch(names.slice(i, i + MAX_NAMES_PER_CALL)));
    }
  }

  /** Drops snapshots not used since `before` unless `inUse(name)` (open connections still need them). */
  sweep(before: number, inUse: (name: string) => boolean): void {
    for (const [name, held] of this.#held) if (held.usedAt < before && !inUse(name)) this.#held.delete(name);
    for (const [name, until] of this.#unknown) if (until <= this.#clock.now()) this.#unknown.delete(name);
  }

  async #sendQueued(): Promise<void> {
    const names = this.#queued;
    this.#queued = [];
    for (let i = 0; i < names.length; i += MAX_NAMES_PER_CALL) {
      const batch = names.slice(i, i + MAX_NAMES_PER_CALL);
      try {
        this.#take(await this.#fetch(batch));
        for (const name of batch) this.#settle(name, (entry) => entry.resolve(this.peek(name)));
      } catch (error) {
        for (const name of batch) this.#settle(name, (entry) => entry.reject(error));
      }
    }
  }

  #settle(name: string, how: (entry: PromiseWithResolvers<SubuserSnapshot | null>) => void): void {
    const entry = this.#waiting.get(name);
    this.#waiting.delete(name);
    if (entry) how(entry);
  }

  #take({ subusers, unknown }: SubusersAnswer): void {
    for (const snapshot of subusers) this.apply(snapshot);
    for (const name of unknown) this.#markUnknown(name);
  }

  #markUnknown(name: string): void {
    if (this.#held.delete(name)) this.#onChange(name);
    this.#unknown.delete(name);
    const oldest = this.#unknown.keys().next();
    // The oldest entry goes first: a Map iterates in insertion order.
    if (this.#unknown.size >= this.#maxUnknown && !oldest.done) this.#unknown.delete(oldest.value);
    this.#unknown.set(name, this.#clock.now() + this.#unknownTtlMs);
  }
}

// Sticky sessions at the node (docs/gateway.md, "Sticky sessions"), with no call: a session's exit is computed from
// its key, the key's generation (from the sub-user's snapshot: only a termination moves it) and the product's exit
// pool, by the rules every node and the API share (src/platform/sticky-sessions.ts), so every node gives the same
// exit. The node remembers the last exit it gave each (key, generation), which spares the computation and tells a
// repin: an exit that left the pool moves its sessions, and the first request after says `repinned`.
import { stickyExit } from "../src/platform/sticky-sessions.ts";
import { type Clock, realClock } from "./clock.ts";
import { type ExitPool, type ExitPools, simulatedPools } from "./exits.ts";

/** The last exit given for one (key, generation): over which version of the pool, and when last used. */
interface Given {
  ip: string;
  poolVersion: number;
  usedAt: number;
}

/** A sticky session's exit for one request; `repinned`: it differs from the one this node gave last. */
export interface StickyExit {
  ip: string;
  repinned: boolean;
}

/**
 * The exits of sticky sessions at one node. `pools`: the products' exits (the simulated ones by default);
 * `maxEntries`, `idleMs`: how many (key, generation) exits are remembered, and for how long unused (the longest
 * session is 60 minutes; a forgotten one is computed again, the same unless its pool changed).
 */
export class StickyExits {
  #pools: ExitPools;
  #clock: Clock;
  #maxEntries: number;
  #idleMs: number;
  /** By `product\nkey\ngeneration`, least recently used first. */
  #given = new Map<string, Given>();

  constructor({
    pools = simulatedPools(),
    clock = realClock,
    maxEntries = 100_000,
    idleMs = 60 * 60_000,
  }: { pools?: ExitPools; clock?: Clock; maxEntries?: number; idleMs?: number } = {}) {
    this.#pools = pools;
    this.#clock = clock;
    this.#maxEntries = maxEntries;
    this.#idleMs = idleMs;
  }

  /**
   * The exit of `key`'s session at `generation`. `repin`: the session's exit leaves this node's pool (the upstream
   * network lost it) and the exit is computed again over the exits left.
   */
  exitOf(
    product: keyof ExitPools,
    key: string,
    generation: number,
    { repin = false }: { repin?: boolean } = {},
  ): StickyExit {
    const pool = this.#pools[product];
    const id = `${product}\n${key}\n${generation}`;
    const known = this.#given.get(id);
    let ip = known && known.poolVersion === pool.version ? known.ip : exitIn(pool, key, generation);
    const dropped = repin && pool.drop(ip);
    if (dropped) ip = exitIn(pool, key, generation);
    const repinned = dropped || (known !== undefined && known.ip !== ip);
    // Set again at the end: the map stays in order of last use.
    this.#given.delete(id);
    this.#given.set(id, { ip, poolVersion: pool.version, usedAt: this.#clock.now() });
    if (this.#given.size > this.#maxEntries) this.#given.delete(this.#given.keys().next().value as string);
    return { ip, repinned };
  }

  /** How many (key, generation) exits are remembered. */
  get size(): number {
    return this.#given.size;
  }

  /** Forgets the exits unused for `idleMs`. */
  sweep(): void {
    const before = this.#clock.now() - this.#idleMs;
    for (const [id, given] of this.#given) {
      if (given.usedAt >= before) break;
      this.#given.delete(id);
    }
  }
}

function exitIn(pool: ExitPool, key: string, generation: number): string {
  // A pool is never empty (`ExitPool.drop` keeps its last exit).
  return stickyExit(pool.candidates, key, generation)!;
}

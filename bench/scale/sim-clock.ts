import type { Clock, TimerHandle } from "../../gateway/clock.ts";

/**
 * Simulated time for the shipped gateway code (`gateway/clock.ts`'s `Clock`): one timeline of timers, run in order
 * of their due times (ties in the order the timers were made), each at its time. Nothing moves the time but
 * `runUntil`, and only once the instant is quiet: every microtask has run and every `setImmediate` with what it
 * started, so work a timer starts (a node's calls batched in one turn, the gate's answers, all without I/O)
 * finishes at its instant. A `setImmediate` runs at the instant it was asked at, after the microtasks before it.
 *
 * Each party (a gateway node, the gate) has its own `Clock` on the timeline, so that a long simulation of a quiet
 * party costs little: a party's periodic timers run as set until `quietMs` after its last one-off timer (a request,
 * a connection closing, a timer of its own); then they rest, and when its next one-off timer comes each runs once,
 * at its last due time before it, before it. What reaches a resting party from outside (a push) waits for that
 * (`deliver`). That is exact for a party whose periodic work, once it has been quiet that long, only forgets what
 * time has passed (as a node's does: its leases, idle entries, snapshots and sessions end and stay ended): ticks
 * that each find nothing more to forget are the one tick. `catchingUp` says whether such a tick is running, so that
 * a simulation can check it calls nothing.
 */
export class SimClock {
  #now: number;
  readonly #quietMs: number;
  /**
   * Timers by due time, then by id (a binary heap): timers due at once run in the order they were made, whether a
   * party's periodic timers rested meanwhile or not.
   */
  #heap: Timer[] = [];
  #nextId = 1;
  /** Timers set and not cleared (periodic ones resting too), by id. */
  readonly #live = new Map<number, Timer>();
  /** `setImmediate` callbacks not run yet. */
  #immediates = 0;
  #catchingUp = false;

  constructor(start: number, { quietMs = Number.POSITIVE_INFINITY }: { quietMs?: number } = {}) {
    this.#now = start;
    this.#quietMs = quietMs;
  }

  now(): number {
    return this.#now;
  }

  /** Whether a resting periodic timer is catching up (see the class). */
  get catchingUp(): boolean {
    return this.#catchingUp;
  }

  /** A clock of one party on this timeline. */
  party(): PartyClock {
    const party: Party = { activeAt: this.#now, resting: [] };
    const clear = (handle: TimerHandle | null | undefined) => {
      if (typeof handle === "number") this.#live.delete(handle);
    };
    const clock: PartyClock = {
      deliver: (callback) => {
        if (party.resting.length === 0) callback();
        else clock.setTimeout(callback, 0);
      },
      now: () => this.#now,
      setTimeout: (callback, ms) => this.#add(party, callback, ms, null),
      clearTimeout: clear,
      setInterval: (callback, ms) => this.#add(party, callback, ms, Math.max(1, ms)),
      clearInterval: clear,
      setImmediate: (callback) => {
        this.#immediates++;
        setImmediate(() => {
          this.#immediates--;
          callback();
        });
      },
    };
    return clock;
  }

  /** Resolves once the instant is quiet: no microtask and no `setImmediate` left, nor any they started. */
  async settle(): Promise<void> {
    // A macrotask turn runs every microtask queued before it; the immediates still counted run in later turns.
    do await new Promise((resolve) => setImmediate(resolve));
    while (this.#immediates > 0);
  }

  /**
   * Runs every timer due by `until` at its time, settling after each, and leaves the time at `until`. Work started
   * outside a timer is the caller's to settle first.
   */
  async runUntil(until: number): Promise<void> {
    for (;;) {
      const timer = this.#heap[0];
      if (timer === undefined || timer.due > until) break;
      this.#pop();
      if (!this.#live.has(timer.id)) continue;
      const { party } = timer;
      if (timer.every === null && party.resting.length > 0) {
        // The party wakes: each resting periodic timer first runs once, at its last due time before this one.
        for (const rest of party.resting.splice(0)) {
          if (!this.#live.has(rest.id)) continue;
          rest.due += Math.floor((timer.due - rest.due) / rest.every!) * rest.every!;
          rest.catchUp = true;
          this.#push(rest);
        }
        this.#push(timer);
        continue;
      }
      if (timer.every !== null && !timer.catchUp && timer.due > party.activeAt + this.#quietMs) {
        party.resting.push(timer);
        continue;
      }
      const latest = this.#now;
      // A catch-up tick runs at its own due time, though other parties' timers may have run since: it only forgets.
      this.#now = timer.catchUp ? timer.due : Math.max(latest, timer.due);
      this.#catchingUp = timer.catchUp;
      timer.catchUp = false;
      if (timer.every === null) {
        this.#live.delete(timer.id);
        party.activeAt = this.#now;
      } else {
        timer.due += timer.every;
        this.#push(timer);
      }
      timer.callback();
      await this.settle();
      this.#now = Math.max(latest, this.#now);
      this.#catchingUp = false;
    }
    this.#now = Math.max(this.#now, until);
  }

  #add(party: Party, callback: () => void, ms: number, every: number | null): number {
    const id = this.#nextId++;
    const timer: Timer = {
      id,
      due: this.#now + Math.max(0, ms),
      every,
      callback,
      party,
      catchUp: false,
    };
    this.#live.set(id, timer);
    this.#push(timer);
    return id;
  }

  #push(timer: Timer): void {
    const heap = this.#heap;
    heap.push(timer);
    let at = heap.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(timer, heap[parent] as Timer)) break;
      heap[at] = heap[parent] as Timer;
      at = parent;
    }
    heap[at] = timer;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop() as Timer;
    if (heap.length === 0) return;
    let at = 0;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right] as Timer, heap[left] as Timer) ? right : left;
      if (!before(heap[child] as Timer, last)) break;
      heap[at] = heap[child] as Timer;
      at = child;
    }
    heap[at] = last;
  }
}

/**
 * A party's clock. `deliver(callback)`: what reaches the party from outside now (a message another party sends):
 * run at once, or, while its periodic timers rest, as a one-off timer of this instant, after they catch up.
 */
export interface PartyClock extends Clock {
  deliver(callback: () => void): void;
}

interface Party {
  /** When its last one-off timer ran. */
  activeAt: number;
  /** Its periodic timers resting while it is quiet. */
  resting: Timer[];
}

interface Timer {
  id: number;
  due: number;
  /** The period of a periodic timer; null: a one-off. */
  every: number | null;
  callback: () => void;
  party: Party;
  /** A resting periodic timer's one run before its party's next one-off timer. */
  catchUp: boolean;
}

const before = (a: Timer, b: Timer) => a.due < b.due || (a.due === b.due && a.id < b.id);

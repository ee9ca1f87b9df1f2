// The time and the timers a node's decisions run on: the real ones by default; a simulation passes its own, so the
// shipped decider and lease manager run under simulated time.

/** A timer's handle: opaque, given back to the clock that made it (the real clock's are Node's `Timeout`s). */
export type TimerHandle = NonNullable<unknown>;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `callback` once, `ms` from now. A timer never keeps the process alive. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(timer: TimerHandle | null | undefined): void;
  /** Runs `callback` every `ms`. */
  setInterval(callback: () => void, ms: number): TimerHandle;
  clearInterval(timer: TimerHandle | null | undefined): void;
  /** Runs `callback` once the current turn's I/O is done (Node's `setImmediate`): calls made in one turn batch. */
  setImmediate(callback: () => void): void;
}

/** Node's clock: `Date.now` and its timers, unreferenced. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
  setInterval: (callback, ms) => setInterval(callback, ms).unref(),
  clearInterval: (timer) => clearInterval(timer as NodeJS.Timeout | undefined),
  setImmediate: (callback) => {
    setImmediate(callback);
  },
};

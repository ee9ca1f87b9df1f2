/**
 * The one clock. Every time-dependent rule (windows, overlaps, expiry, retention)
 * reads it, so tests can move time: `vi.setSystemTime()` moves it inside workerd,
 * and `useClock()` swaps it for pure unit tests.
 */
export interface Clock {
  now(): number;
}

const systemClock: Clock = { now: () => Date.now() };
let current: Clock = systemClock;

export function useClock(clock: Clock | null): void {
  current = clock ?? systemClock;
}

/** Milliseconds since the Unix epoch. */
export function now(): number {
  return current.now();
}

export function nowIso(): string {
  return new Date(current.now()).toISOString();
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

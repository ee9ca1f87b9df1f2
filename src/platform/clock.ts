/**
 * The one clock. Every time-dependent rule (windows, overlaps, expiry, retention) reads it, so tests can move
 * time: `vi.setSystemTime()` moves it inside workerd, for the worker and its Durable Objects alike.
 */

/** Milliseconds since the Unix epoch. */
export function now(): number {
  return Date.now();
}

/** The UTC month of a moment, `2026-11`. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

export function toIso(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** `ms` plus whole calendar months (UTC); the day is clamped to the target month's length (Jan 31 + 1 → Feb 28). */
export function addMonths(ms: number, months: number): number {
  const date = new Date(ms);
  const day = date.getUTCDate();
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  date.setUTCDate(Math.min(day, lastDay));
  return date.getTime();
}

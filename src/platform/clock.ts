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

/** The UTC day of a moment, `2026-11-28`. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * The instants the API takes and answers: years 0000 to 9999, the range RFC 3339 can write (an offset can carry a
 * timestamp's text past it; such an input is refused).
 */
export const EARLIEST_INSTANT = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
export const LATEST_INSTANT = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

export function isWithinInstants(ms: number): boolean {
  return ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT;
}

/** RFC 3339 in UTC; every instant the API computes lies within `EARLIEST_INSTANT`…`LATEST_INSTANT`. */
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

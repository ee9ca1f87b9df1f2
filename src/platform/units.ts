/**
 * Bandwidth is counted in bytes: 1 GB = 10^9 bytes (1 MB = 10^6), as gateways count it. Byte counts up to a
 * petabyte (10^15) are exact integers in a double, and so is every product below.
 */
export const BYTES_PER_GB = 1_000_000_000;
export const BYTES_PER_MB = 1_000_000;

/** GB with at most 3 decimals (whole MB) as exact bytes. */
export function gbToBytes(gb: number): number {
  return Math.round(gb * 1000) * BYTES_PER_MB;
}

/** Bytes as the GB figure on the wire; `Math.round(gb * 10^9)` gives the exact bytes back (to 2^53). */
export function bytesToGb(bytes: number): number {
  return bytes / BYTES_PER_GB;
}

/**
 * Whether `used` reaches `percent` % of `size`, exactly: `used × 100` of a petabyte passes 2^53, where a double
 * would round a few bytes either way (SQLite's 64-bit integers, which decide the same in D1, do not).
 */
export function reachesPercent(used: number, size: number, percent: number): boolean {
  if (!Number.isSafeInteger(used) || !Number.isSafeInteger(size) || !Number.isSafeInteger(percent)) {
    return used * 100 >= size * percent;
  }
  return BigInt(used) * 100n >= BigInt(size) * BigInt(percent);
}

/** A share of a count as a fraction in [0, 1]: 0 of nothing. */
export function fractionOf(part: number, whole: number): number {
  return whole > 0 ? Math.min(1, part / whole) : 0;
}

import { DAY, MINUTE, SECOND } from "../../platform/clock";
import { SlidingLog } from "../../platform/sliding-log";
import type { WindowLimits, WindowVerdict } from "./contract";

export interface DayBucket {
  second: number;
  count: number;
  /** The latest request counted in this second (ms). */
  lastMs: number;
}

/**
 * Rolling windows for one caller: an exact 60-second window (millisecond timestamps) and a 24-hour window
 * counted in one-second buckets. A bucket remembers its latest request and stays in the 24-hour window until
 * that request has left it, so the daily count is never under the truth.
 *
 * Pure in-memory logic: the Durable Object persists the buckets and rebuilds the windows from them after a
 * restart.
 */
export class RollingWindows {
  readonly #minute = new SlidingLog(MINUTE);
  #dayBuckets: DayBucket[] = [];
  #dayTotal = 0;

  /** Restores state from persisted buckets. */
  static fromBuckets(buckets: Iterable<DayBucket>, now: number): RollingWindows {
    const windows = new RollingWindows();
    for (const bucket of buckets) {
      windows.#dayBuckets.push({ ...bucket });
      windows.#dayTotal += bucket.count;
      // Each request's exact millisecond is unknown after a restart: assume the latest, the conservative choice.
      if (bucket.lastMs > now - MINUTE) for (let i = 0; i < bucket.count; i++) windows.#minute.add(bucket.lastMs);
    }
    windows.prune(now);
    return windows;
  }

  /** Counts the request if both windows have room. Returns the verdict either way. */
  admit(now: number, limits: WindowLimits): WindowVerdict {
    this.prune(now);
    const minuteCount = this.#minute.count(now);
    const minuteFull = minuteCount >= limits.perMinute;
    const dayFull = limits.perDay !== null && this.#dayTotal >= limits.perDay;

    if (minuteFull || dayFull) {
      const minuteLeaves = this.#minuteLeaves(now);
      const dayLeaves = this.#dayLeaves(now);
      const useDay = dayFull && (!minuteFull || dayLeaves > minuteLeaves);
      const leaves = useDay ? dayLeaves : minuteLeaves;
      const windowSeconds = (useDay ? DAY : MINUTE) / SECOND;
      return {
        allowed: false,
        limit: useDay ? (limits.perDay as number) : limits.perMinute,
        remaining: 0,
        reset: Math.ceil(leaves / SECOND),
        retryAfter: Math.min(windowSeconds, Math.max(1, Math.ceil((leaves - now) / SECOND))),
      };
    }

    this.#record(now);
    const minuteRemaining = limits.perMinute - (minuteCount + 1);
    const dayRemaining = limits.perDay === null ? Number.POSITIVE_INFINITY : limits.perDay - this.#dayTotal;
    if (dayRemaining < minuteRemaining) {
      const reset = Math.ceil(this.#dayLeaves(now) / SECOND);
      return { allowed: true, limit: limits.perDay as number, remaining: dayRemaining, reset };
    }
    return {
      allowed: true,
      limit: limits.perMinute,
      remaining: minuteRemaining,
      reset: Math.ceil(this.#minuteLeaves(now) / SECOND),
    };
  }

  /** The bucket that `now` was counted in, for persisting. */
  currentBucket(now: number): DayBucket | undefined {
    const last = this.#dayBuckets[this.#dayBuckets.length - 1];
    return last?.second === Math.floor(now / SECOND) ? last : undefined;
  }

  /** Drops what has left the windows. Returns the oldest second still held, for storage pruning. */
  prune(now: number): number | null {
    let dropped = 0;
    while (dropped < this.#dayBuckets.length && this.#dayBuckets[dropped]!.lastMs <= now - DAY) {
      this.#dayTotal -= this.#dayBuckets[dropped]!.count;
      dropped++;
    }
    if (dropped > 0) this.#dayBuckets.splice(0, dropped);
    return this.#dayBuckets[0]?.second ?? null;
  }

  #record(now: number): void {
    this.#minute.add(now);
    const second = Math.floor(now / SECOND);
    const last = this.#dayBuckets[this.#dayBuckets.length - 1];
    if (last && last.second === second) {
      last.count++;
      last.lastMs = Math.max(last.lastMs, now);
    } else {
      this.#dayBuckets.push({ second, count: 1, lastMs: now });
    }
    this.#dayTotal++;
  }

  /** When (ms) the oldest request of the minute window leaves it. */
  #minuteLeaves(now: number): number {
    return this.#minute.nextExpiry(now) ?? now + MINUTE;
  }

  #dayLeaves(now: number): number {
    const oldest = this.#dayBuckets[0];
    return oldest ? oldest.lastMs + DAY : now + DAY;
  }
}

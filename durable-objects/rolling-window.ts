import { DAY, MINUTE, SECOND } from "../src/platform/clock";
import { SlidingLog } from "./sliding-log";

/**
 * Rolling windows for one API key: an exact 60-second window (millisecond timestamps)
 * and a 24-hour window counted in one-second buckets. A bucket stays in the 24-hour
 * window until its *last* millisecond has left it, so the daily count is never under
 * the truth (it can only over-count by less than one second's worth of requests).
 *
 * Pure in-memory logic: the Durable Object persists the per-second buckets and
 * rebuilds the windows from them after a restart.
 */
export interface WindowLimits {
  perMinute: number;
  perDay: number | null;
}

export interface WindowVerdict {
  allowed: boolean;
  /** Limit, remaining and reset (epoch seconds) of the window with the lower remaining. */
  limit: number;
  remaining: number;
  reset: number;
  /** Whole seconds to wait, on a refusal; equals reset minus the current epoch second. */
  retryAfter?: number;
}

export class RollingWindows {
  private readonly minute = new SlidingLog(MINUTE);
  private dayBuckets: Array<{ second: number; count: number }> = [];
  private dayTotal = 0;

  /** Restores state from persisted per-second buckets. */
  static fromBuckets(buckets: Iterable<{ second: number; count: number }>, now: number): RollingWindows {
    const windows = new RollingWindows();
    for (const bucket of buckets) {
      windows.dayBuckets.push({ ...bucket });
      windows.dayTotal += bucket.count;
      // The exact millisecond is unknown after a restart: assume the latest, the conservative choice.
      const latest = windows.bucketLatest(bucket);
      if (latest > now - MINUTE) for (let i = 0; i < bucket.count; i++) windows.minute.add(latest);
    }
    windows.prune(now);
    return windows;
  }

  /** Counts the request if both windows have room. Returns the verdict either way. */
  admit(now: number, limits: WindowLimits): WindowVerdict {
    this.prune(now);
    const minuteCount = this.minute.count(now);
    const minuteFull = minuteCount >= limits.perMinute;
    const dayFull = limits.perDay !== null && this.dayTotal >= limits.perDay;

    if (minuteFull || dayFull) {
      const minuteReset = this.minuteReset(now);
      const dayReset = this.dayReset(now);
      const useDay = dayFull && (!minuteFull || dayReset > minuteReset);
      const reset = useDay ? dayReset : minuteReset;
      return {
        allowed: false,
        limit: useDay ? (limits.perDay as number) : limits.perMinute,
        remaining: 0,
        reset,
        retryAfter: Math.max(1, reset - Math.floor(now / SECOND)),
      };
    }

    this.record(now);
    const minuteRemaining = limits.perMinute - (minuteCount + 1);
    const dayRemaining = limits.perDay === null ? Number.POSITIVE_INFINITY : limits.perDay - this.dayTotal;
    if (dayRemaining < minuteRemaining) {
      return { allowed: true, limit: limits.perDay as number, remaining: dayRemaining, reset: this.dayReset(now) };
    }
    return { allowed: true, limit: limits.perMinute, remaining: minuteRemaining, reset: this.minuteReset(now) };
  }

  private record(now: number): void {
    this.minute.add(now);
    const second = Math.floor(now / SECOND);
    const last = this.dayBuckets[this.dayBuckets.length - 1];
    if (last && last.second === second) last.count++;
    else this.dayBuckets.push({ second, count: 1 });
    this.dayTotal++;
  }

  /** Drops what has left the windows. Returns the oldest second still held, for storage pruning. */
  prune(now: number): number | null {
    let dropped = 0;
    while (dropped < this.dayBuckets.length && this.bucketLatest(this.dayBuckets[dropped]!) <= now - DAY) {
      this.dayTotal -= this.dayBuckets[dropped]!.count;
      dropped++;
    }
    if (dropped > 0) this.dayBuckets.splice(0, dropped);
    return this.dayBuckets[0]?.second ?? null;
  }

  /** Epoch second at which the oldest request of the minute window leaves it. */
  private minuteReset(now: number): number {
    return Math.ceil((this.minute.nextExpiry(now) ?? now + MINUTE) / SECOND);
  }

  private dayReset(now: number): number {
    const oldest = this.dayBuckets[0];
    const leaves = oldest ? this.bucketLatest(oldest) + DAY : now + DAY;
    return Math.ceil(leaves / SECOND);
  }

  /** The latest millisecond a request in this bucket may have arrived at. */
  private bucketLatest(bucket: { second: number }): number {
    return bucket.second * SECOND + SECOND - 1;
  }
}

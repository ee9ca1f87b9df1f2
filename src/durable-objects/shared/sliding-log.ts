/**
 * A sliding log of event times: exact counts over a rolling window. An event at `t` is inside the
 * window at `now` while `t > now - windowMs`. Amortised O(1) per event.
 */
export class SlidingLog {
  private times: number[] = [];
  private head = 0;

  constructor(private readonly windowMs: number) {}

  count(now: number): number {
    this.prune(now);
    return this.times.length - this.head;
  }

  add(time: number): void {
    this.times.push(time);
  }

  /** When the oldest event leaves the window (ms), or null when empty. */
  nextExpiry(now: number): number | null {
    this.prune(now);
    const oldest = this.times[this.head];
    return oldest === undefined ? null : oldest + this.windowMs;
  }

  private prune(now: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) <= now - this.windowMs) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }
}

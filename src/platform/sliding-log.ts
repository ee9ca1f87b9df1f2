/**
 * A sliding log of event times: exact counts over a rolling window. An event at `t` is inside the window at `now`
 * while `t > now - windowMs`. Amortised O(1) per event. Pure and erasable: gateway nodes run this file as it is,
 * so a node's rolling second and its sub-user gate's are the same code.
 */
export class SlidingLog {
  readonly #windowMs: number;
  #times: number[] = [];
  #head = 0;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  count(now: number): number {
    this.#prune(now);
    return this.#times.length - this.#head;
  }

  add(time: number): void {
    this.#times.push(time);
  }

  /** How many of the window's events are after `since` (binary search: events are added in order). */
  countSince(now: number, since: number): number {
    this.#prune(now);
    let lo = this.#head;
    let hi = this.#times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#times[mid] as number) <= since) lo = mid + 1;
      else hi = mid;
    }
    return this.#times.length - lo;
  }

  /** When the oldest event leaves the window (ms), or null when empty. */
  nextExpiry(now: number): number | null {
    this.#prune(now);
    const oldest = this.#times[this.#head];
    return oldest === undefined ? null : oldest + this.#windowMs;
  }

  #prune(now: number): void {
    while (this.#head < this.#times.length && (this.#times[this.#head] as number) <= now - this.#windowMs) this.#head++;
    // Compact now and then rather than shifting on every drop.
    if (this.#head > 64 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }
}

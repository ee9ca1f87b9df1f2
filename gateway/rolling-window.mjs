/** Instants in the last `spanMs` (a rolling window): how many, and when the oldest leaves. */
export class RollingWindow {
  #spanMs;
  #times = [];
  #head = 0;

  constructor(spanMs) {
    this.#spanMs = spanMs;
  }

  add(at) {
    this.#times.push(at);
  }

  count(at) {
    this.#drop(at);
    return this.#times.length - this.#head;
  }

  /** How many of the window's instants are after `since` (binary search: the instants are in order). */
  countSince(at, since) {
    this.#drop(at);
    let lo = this.#head;
    let hi = this.#times.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#times[mid] <= since) lo = mid + 1;
      else hi = mid;
    }
    return this.#times.length - lo;
  }

  /** When the oldest instant in the window leaves it (null when empty). */
  nextExpiry(at) {
    this.#drop(at);
    return this.#head < this.#times.length ? this.#times[this.#head] + this.#spanMs : null;
  }

  #drop(at) {
    while (this.#head < this.#times.length && this.#times[this.#head] <= at - this.#spanMs) this.#head++;
    // Compact now and then rather than shifting on every drop.
    if (this.#head > 64 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
  }
}

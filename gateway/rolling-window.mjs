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

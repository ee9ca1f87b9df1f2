import { now } from "./clock";

/**
 * A value an isolate reads at most once per `periodMs`: readers within the period share the value held, and readers
 * while a read is under way share that read. `update` applies a change this isolate made to the value held and to
 * the read under way, so the isolate sees its own writes at once.
 */
export class RefreshedValue<T, Args extends unknown[]> {
  #held: { value: T; readAt: number } | null = null;
  #reading: Promise<T> | null = null;
  #changesDuringRead: Array<(value: T) => void> = [];

  private readonly periodMs: number;
  private readonly read: (...args: Args) => Promise<T>;

  constructor(periodMs: number, read: (...args: Args) => Promise<T>) {
    this.periodMs = periodMs;
    this.read = read;
  }

  get(...args: Args): Promise<T> {
    // A clock set back (a test's, or a corrected one) makes the value stale rather than held for as long.
    const age = this.#held ? now() - this.#held.readAt : -1;
    if (this.#held && age >= 0 && age < this.periodMs) return Promise.resolve(this.#held.value);
    this.#reading ??= this.#readNow(args);
    return this.#reading;
  }

  update(change: (value: T) => void): void {
    if (this.#held) change(this.#held.value);
    if (this.#reading) this.#changesDuringRead.push(change);
  }

  async #readNow(args: Args): Promise<T> {
    const readAt = now();
    this.#changesDuringRead = [];
    try {
      const value = await this.read(...args);
      for (const change of this.#changesDuringRead) change(value);
      this.#held = { value, readAt };
      return value;
    } finally {
      this.#reading = null;
    }
  }
}

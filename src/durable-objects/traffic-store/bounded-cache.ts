/**
 * Decoded rows kept in memory, least recently used first out, bounded by their weight (the rows they hold) rather
 * than their number: one bucket of a busy account can hold more cells than a thousand quiet ones, and a store's
 * isolate has 128 MB. An entry heavier than the whole budget is not kept.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, { value: V; weight: number }>();
  readonly #budget: number;
  readonly #weigh: (value: V) => number;
  #weight = 0;

  constructor(budget: number, weigh: (value: V) => number) {
    this.#budget = budget;
    this.#weigh = weigh;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  set(key: K, value: V): void {
    this.delete(key);
    const weight = this.#weigh(value);
    if (weight > this.#budget) return;
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#weight <= this.#budget) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }

  /** The weight held (for tests). */
  get weight(): number {
    return this.#weight;
  }
}

/**
 * An object's alarm, set no later than asked: `wakeBy` moves it earlier only (a storage write: no await needed),
 * and `rang` forgets it when it fires. Remembered in memory, so repeated asks cost no storage reads.
 */
export class Alarm {
  readonly #storage: DurableObjectStorage;
  #at: number | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  wakeBy(at: number): void {
    if (this.#at !== null && this.#at <= at) return;
    this.#at = at;
    void this.#storage.setAlarm(at);
  }

  rang(): void {
    this.#at = null;
  }
}

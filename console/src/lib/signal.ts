import { useEffect, useState } from "preact/hooks";

/** A value that components subscribe to (`useSignal`): setting it re-renders each of them. */
export interface Signal<T> {
  readonly value: T;
  set(next: T): void;
  subscribe(listener: (value: T) => void): () => void;
}

export function signal<T>(initial: T): Signal<T> {
  let value = initial;
  const listeners = new Set<(value: T) => void>();
  return {
    get value() {
      return value;
    },
    set(next) {
      value = next;
      for (const listener of listeners) listener(next);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  };
}

/** The signal's value; the component renders again whenever it is set. */
export function useSignal<T>(source: Signal<T>): T {
  const [value, setValue] = useState(() => source.value);
  useEffect(() => {
    const update = (next: T) => setValue(() => next);
    // A set between the render and this subscription would otherwise be missed.
    update(source.value);
    return source.subscribe(update);
  }, [source]);
  return value;
}

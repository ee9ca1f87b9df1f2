import { performance } from "node:perf_hooks";

/**
 * `object` with every method call timed (`took` gets its milliseconds; an async call's until it settles, which on
 * `node:sqlite` with every neighbour answering at once is its CPU).
 */
export function timedCalls<T extends object>(object: T, took: (ms: number) => void): T {
  return new Proxy(object, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const begin = performance.now();
        const result = value.apply(target, args);
        if (result instanceof Promise) return result.finally(() => took(performance.now() - begin));
        took(performance.now() - begin);
        return result;
      };
    },
  });
}

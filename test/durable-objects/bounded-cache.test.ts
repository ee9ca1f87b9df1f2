import { describe, expect, it } from "vitest";
import { BoundedCache } from "../../src/durable-objects/traffic-store/bounded-cache";

const rows = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("BoundedCache (decoded store rows kept in memory)", () => {
  it("holds at most its budget of weight, dropping the least recently used first", () => {
    const cache = new BoundedCache<string, number[]>(10, (value) => value.length);
    cache.set("a", rows(4));
    cache.set("b", rows(4));
    expect(cache.get("a")).toHaveLength(4); // a is now the most recently used
    cache.set("c", rows(4));
    expect(cache.weight).toBe(8);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toHaveLength(4);
    expect(cache.get("c")).toHaveLength(4);
  });

  it("keeps nothing heavier than the whole budget, and replacing or deleting an entry releases its weight", () => {
    const cache = new BoundedCache<string, number[]>(10, (value) => value.length);
    cache.set("small", rows(3));
    cache.set("huge", rows(11));
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.get("small")).toHaveLength(3);
    cache.set("small", rows(5));
    expect(cache.weight).toBe(5);
    cache.delete("small");
    expect(cache.weight).toBe(0);
    expect(cache.get("small")).toBeUndefined();
  });
});

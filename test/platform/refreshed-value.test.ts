import { afterEach, describe, expect, it, vi } from "vitest";
import { RefreshedValue } from "../../src/platform/refreshed-value";

const T0 = Date.parse("2026-11-27T12:00:00Z");

/** A value read from a counter: each read answers a new set holding the read's number. */
function counted() {
  let reads = 0;
  const value = new RefreshedValue(1000, async (_ctx: string) => new Set([`read-${++reads}`]));
  return { value, reads: () => reads };
}

afterEach(() => vi.useRealTimers());

describe("a value an isolate reads at most once a period (the list of tailed accounts)", () => {
  it("reads once per period, however many readers ask within it, and again when the clock went back", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(T0);
    const { value, reads } = counted();
    for (let i = 0; i < 50; i++) await value.get("ctx");
    expect(reads()).toBe(1);
    vi.setSystemTime(T0 + 999);
    expect(await value.get("ctx")).toEqual(new Set(["read-1"]));
    vi.setSystemTime(T0 + 1000);
    expect(await value.get("ctx")).toEqual(new Set(["read-2"]));
    expect(reads()).toBe(2);
    vi.setSystemTime(T0);
    expect(await value.get("ctx")).toEqual(new Set(["read-3"]));
  });

  it("readers during a read share it", async () => {
    const { value, reads } = counted();
    const answers = await Promise.all(Array.from({ length: 20 }, () => value.get("ctx")));
    expect(reads()).toBe(1);
    expect(new Set(answers).size).toBe(1);
  });

  it("a change the isolate makes shows at once, in the value held and in a read under way", async () => {
    const { value } = counted();
    await value.get("ctx");
    value.update((set) => set.add("opened-here"));
    expect(await value.get("ctx")).toEqual(new Set(["read-1", "opened-here"]));

    const { value: fresh } = counted();
    const reading = fresh.get("ctx");
    fresh.update((set) => set.add("opened-during-read"));
    expect(await reading).toEqual(new Set(["read-1", "opened-during-read"]));
  });

  it("a failed read is tried again by the next reader", async () => {
    let fail = true;
    const value = new RefreshedValue(1000, async () => {
      if (fail) throw new Error("D1 unavailable");
      return 1;
    });
    await expect(value.get()).rejects.toThrow("D1 unavailable");
    fail = false;
    expect(await value.get()).toBe(1);
  });
});

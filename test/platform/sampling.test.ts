import { describe, expect, it } from "vitest";
import { uniformHash } from "../../src/platform/sampling";

const ids = Array.from({ length: 10_000 }, (_, i) => `req_01M83R${i.toString(36).padStart(6, "0")}`);

describe("uniformHash", () => {
  it("decides the same way for the same id, so a redelivered batch samples what its first delivery did", () => {
    expect(uniformHash("req_abc")).toBe(uniformHash("req_abc"));
    expect(uniformHash("req_abc")).not.toBe(uniformHash("req_abd"));
  });

  it("spreads similar ids evenly over [0, 1): every tenth holds 10% ± 2%", () => {
    const deciles = new Array(10).fill(0);
    for (const id of ids) {
      const value = uniformHash(id);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
      deciles[Math.floor(value * 10)]++;
    }
    for (const count of deciles) expect(Math.abs(count - 1000)).toBeLessThan(200);
  });

  it("gives independent decisions under another seed: the lowest 10% by one hash are not kept more often by the other", () => {
    const ranked = [...ids].sort((a, b) => uniformHash(a, 0x9747b28c) - uniformHash(b, 0x9747b28c));
    const lowest = ranked.slice(0, 1000);
    const kept = lowest.filter((id) => uniformHash(id) < 0.5).length;
    expect(Math.abs(kept - 500)).toBeLessThan(80);
  });
});

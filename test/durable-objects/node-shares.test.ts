import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { NODE_LEASE_MS, NodeShares } from "../../src/durable-objects/subuser-gate/node-shares";

const START = 1_000_000;
const started = (inUseMs = 1000) => new NodeShares({ startedAt: START, inUseMs, grantedBefore: false });

describe("leased capacity split among gateway nodes", () => {
  it("a lone node gets what it wants up to the limit; giving it back frees it", () => {
    const shares = started();
    expect(shares.renew(5, { node: "a", held: 0, inUse: 0, want: 8 }, START)).toBe(5);
    expect(shares.counted(START)).toBe(5);
    expect(shares.renew(5, { node: "a", held: 5, inUse: 0, want: 0 }, START + 1000)).toBe(0);
    // The share it enforced is counted until it confirms the cut.
    expect(shares.counted(START + 1000)).toBe(5);
    expect(shares.renew(5, { node: "a", held: 0, inUse: 0, want: 0 }, START + 1100)).toBe(0);
    expect(shares.counted(START + 1100)).toBe(0);
    expect(shares.nodes).toBe(0);
  });

  it("busy nodes split the limit fairly; a node above its share is cut at its next renewal", () => {
    const shares = started();
    expect(shares.renew(6, { node: "a", held: 0, inUse: 0, want: 6 }, START)).toBe(6);
    // b waits: nothing is free until a renews.
    expect(shares.renew(6, { node: "b", held: 0, inUse: 0, want: 6 }, START + 10)).toBe(0);
    expect(shares.renew(6, { node: "a", held: 6, inUse: 0, want: 6 }, START + 500)).toBe(3);
    expect(shares.renew(6, { node: "a", held: 3, inUse: 0, want: 6 }, START + 600)).toBe(3);
    expect(shares.renew(6, { node: "b", held: 0, inUse: 0, want: 6 }, START + 700)).toBe(3);
  });

  it("requests a node admitted in its last second count for that second, whatever its share since", () => {
    const shares = started(1000);
    shares.renew(5, { node: "a", held: 0, inUse: 0, want: 5 }, START);
    shares.renew(5, { node: "a", held: 5, inUse: 5, want: 0 }, START + 100);
    shares.renew(5, { node: "a", held: 0, inUse: 5, want: 0 }, START + 200);
    expect(shares.renew(5, { node: "b", held: 0, inUse: 0, want: 5 }, START + 300)).toBe(0);
    expect(shares.renew(5, { node: "b", held: 0, inUse: 0, want: 5 }, START + 1250)).toBe(5);
  });

  it("open connections keep counting until they close, even when the node's share was cut", () => {
    const shares = started(NODE_LEASE_MS);
    shares.renew(4, { node: "a", held: 0, inUse: 0, want: 4 }, START);
    shares.renew(4, { node: "a", held: 4, inUse: 4, want: 0 }, START + 100);
    expect(shares.renew(4, { node: "b", held: 0, inUse: 0, want: 4 }, START + 200)).toBe(0);
  });

  it("a node that stops renewing gives its share back when its lease ends", () => {
    const shares = started();
    shares.renew(3, { node: "dead", held: 0, inUse: 0, want: 3 }, START);
    expect(shares.renew(3, { node: "b", held: 0, inUse: 0, want: 3 }, START + NODE_LEASE_MS - 1)).toBe(0);
    expect(shares.renew(3, { node: "b", held: 0, inUse: 0, want: 3 }, START + NODE_LEASE_MS)).toBe(3);
  });

  it("after a restart the gate grants no more than a node reports holding, until old leases have ended", () => {
    const shares = new NodeShares({ startedAt: START, inUseMs: 1000, grantedBefore: true });
    expect(shares.renew(5, { node: "a", held: 2, inUse: 0, want: 5 }, START + 100)).toBe(2);
    expect(shares.renew(5, { node: "b", held: 0, inUse: 0, want: 5 }, START + 200)).toBe(0);
    expect(shares.renew(5, { node: "b", held: 0, inUse: 0, want: 5 }, START + NODE_LEASE_MS)).toBe(3);
  });

  it("whatever the nodes report and in whatever order, what they may use never sums past the limit", () => {
    const step = fc.record({
      node: fc.constantFrom("a", "b", "c", "d"),
      dt: fc.integer({ min: 0, max: 1500 }),
      want: fc.integer({ min: 0, max: 12 }),
      inUse: fc.integer({ min: 0, max: 12 }),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.array(step, { maxLength: 60 }), (limit, steps) => {
        const shares = started();
        // Each node enforces its last grant at once, until its lease ends, and uses at most that.
        const enforced = new Map<string, { share: number; until: number }>();
        let at = START;
        for (const { node, dt, want, inUse } of steps) {
          at += dt;
          const mine = enforced.get(node);
          const held = mine && mine.until > at ? mine.share : 0;
          const granted = shares.renew(limit, { node, held, inUse: Math.min(inUse, held), want }, at);
          enforced.set(node, { share: granted, until: at + NODE_LEASE_MS });
          let live = 0;
          for (const { share, until } of enforced.values()) if (until > at) live += share;
          expect(live).toBeLessThanOrEqual(limit);
          expect(shares.counted(at)).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });
});

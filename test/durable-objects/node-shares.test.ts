import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  NODE_LEASE_MS,
  NodeShares,
  QUIET_LEASE_MS,
  type ShareRequest,
} from "../../src/durable-objects/subuser-gate/node-shares";

const START = 1_000_000;
const started = (inUseMs = 1000) => new NodeShares({ startedAt: START, inUseMs, grantedBefore: false });
const ask = (node: string, want: number, held = 0, inUse = 0): ShareRequest => ({ node, held, inUse, want });

describe("leased capacity split among gateway nodes", () => {
  it("a lone node gets what it wants up to the limit, for a quiet lease of a minute; giving it back frees it", () => {
    const shares = started();
    expect(shares.renew(5, ask("a", 8), START)).toEqual({ granted: 5, expiresAt: START + QUIET_LEASE_MS, cut: [] });
    const quiet = shares.renew(5, ask("a", 4, 5), START + 10);
    expect(quiet).toEqual({ granted: 4, expiresAt: START + 10 + QUIET_LEASE_MS, cut: [] });
    expect(shares.renew(5, ask("a", 0, 4), START + 1000).granted).toBe(0);
    // The share it enforced is counted until it confirms the cut.
    expect(shares.counted(START + 1000)).toBe(4);
    shares.renew(5, ask("a", 0, 0), START + 1100);
    expect(shares.counted(START + 1100)).toBe(0);
    expect(shares.nodes).toBe(0);
  });

  it("a node that comes to wait gets the holders above their fair share asked to renew at once (once a second)", () => {
    const shares = started();
    shares.renew(6, ask("a", 6), START);
    const waiting = shares.renew(6, ask("b", 6), START + 10);
    expect(waiting).toEqual({ granted: 0, expiresAt: START + 10 + NODE_LEASE_MS, cut: ["a"] });
    expect(shares.renew(6, ask("b", 6), START + 20).cut).toEqual([]);
    // a renews: it is cut to its fair share on a short lease; once it enforces that, b gets the rest.
    expect(shares.renew(6, ask("a", 6, 6), START + 100)).toMatchObject({
      granted: 3,
      expiresAt: START + 100 + NODE_LEASE_MS,
    });
    shares.renew(6, ask("a", 6, 3), START + 150);
    expect(shares.renew(6, ask("b", 6), START + 200).granted).toBe(3);
  });

  it("requests a node admitted in its last second count for that second, whatever its share since", () => {
    const shares = started(1000);
    shares.renew(5, ask("a", 5), START);
    shares.renew(5, ask("a", 0, 5, 5), START + 100);
    shares.renew(5, ask("a", 0, 0, 5), START + 200);
    expect(shares.renew(5, ask("b", 5), START + 300).granted).toBe(0);
    expect(shares.renew(5, ask("b", 5), START + 1250).granted).toBe(5);
  });

  it("open connections keep counting until they close, even when the node's share was cut", () => {
    const shares = started(QUIET_LEASE_MS);
    shares.renew(4, ask("a", 4), START);
    shares.renew(4, ask("a", 0, 4, 4), START + 100);
    expect(shares.renew(4, ask("b", 4), START + 200).granted).toBe(0);
  });

  it("a node that stops renewing gives its share back when its lease ends", () => {
    const shares = started();
    shares.renew(3, ask("dead", 3), START);
    const quiet = shares.renew(3, ask("dead", 3, 3), START + 10);
    expect(shares.renew(3, ask("b", 3), quiet.expiresAt - 1).granted).toBe(0);
    expect(shares.renew(3, ask("b", 3), quiet.expiresAt).granted).toBe(3);
  });

  it("after a restart the gate grants no more than a node reports holding, until the longest lease has ended", () => {
    const shares = new NodeShares({ startedAt: START, inUseMs: 1000, grantedBefore: true });
    expect(shares.renew(5, ask("a", 5, 2), START + 100).granted).toBe(2);
    expect(shares.renew(5, ask("b", 5), START + 200).granted).toBe(0);
    // a waited on short leases meanwhile, and stopped: b gets all of it.
    expect(shares.renew(5, ask("b", 5), START + QUIET_LEASE_MS).granted).toBe(5);
  });

  it("whatever the nodes report and in whatever order, what they may use never sums past the limit", () => {
    const step = fc.record({
      node: fc.constantFrom("a", "b", "c", "d"),
      dt: fc.integer({ min: 0, max: 70_000 }),
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
          at += dt % 3 === 0 ? dt : dt % 2000;
          const mine = enforced.get(node);
          const held = mine && mine.until > at ? mine.share : 0;
          const grant = shares.renew(limit, ask(node, want, held, Math.min(inUse, held)), at);
          enforced.set(node, { share: grant.granted, until: grant.expiresAt });
          let live = 0;
          for (const { share, until } of enforced.values()) if (until > at) live += share;
          expect(live).toBeLessThanOrEqual(limit);
          expect(shares.counted(at)).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });
});

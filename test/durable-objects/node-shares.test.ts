import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  NODE_LEASE_MS,
  NodeShares,
  QUIET_LEASE_MS,
  type ShareRequest,
} from "../../src/durable-objects/subuser-gate/node-shares";
import { standingShare } from "../../src/platform/standing-shares";

const START = 1_000_000;
const started = (inUseMs = 1000) => new NodeShares({ startedAt: START, inUseMs, grantedBefore: false });
const ask = (node: string, want: number, held = 0, inUse = 0): ShareRequest => ({
  node,
  slot: null,
  held,
  inUse,
  want,
});

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

  it("after a restart with each node's use noted, a node holding nothing (started again) gets the rest at once", () => {
    const before = started(60_000);
    expect(before.renew(10, ask("a", 3), START).granted).toBe(3);
    expect(before.renew(10, ask("b", 4), START + 10).granted).toBe(4);
    expect(before.renew(10, ask("c", 3), START + 20).granted).toBe(3);
    expect(before.counts(START + 30)).toEqual({ a: 3, b: 4, c: 3 });
    const restart = START + 1000;
    const shares = new NodeShares({
      startedAt: restart,
      inUseMs: 1000,
      grantedBefore: true,
      noted: { a: 3, b: 4, c: 3 },
    });
    // Every unit is noted: c, started again (it holds nothing), renews; its noted part is free, the others' are not.
    expect(shares.renew(10, ask("c", 8), restart + 100).granted).toBe(3);
    // b renews holding 4 and wanting 1: it gets 1, and its other 3 go to c at c's next renewal.
    expect(shares.renew(10, ask("b", 1, 4), restart + 200).granted).toBe(1);
    expect(shares.renew(10, ask("b", 1, 1), restart + 300).granted).toBe(1);
    expect(shares.renew(10, ask("c", 8, 3), restart + 400).granted).toBe(6);
    // a never renews: its noted part counts until a lease after the restart.
    expect(shares.counted(restart + 500)).toBe(10);
    expect(shares.liveUntil(restart + 500)).toBeGreaterThanOrEqual(restart + QUIET_LEASE_MS);
  });

  it("across restarts with noted uses, and nodes started again, what the nodes may use never sums past the limit", () => {
    const step = fc.record({
      node: fc.constantFrom("a", "b", "c"),
      dt: fc.integer({ min: 0, max: 70_000 }),
      want: fc.integer({ min: 0, max: 12 }),
      event: fc.constantFrom("renew", "renew", "renew", "gate restart", "node restart"),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.array(step, { maxLength: 60 }), (limit, steps) => {
        let shares = started();
        const enforced = new Map<string, { share: number; until: number }>();
        let at = START;
        for (const { node, dt, want, event } of steps) {
          at += dt % 3 === 0 ? dt : dt % 2000;
          if (event === "gate restart") {
            const noted = Object.fromEntries(
              Object.entries(shares.counts(at)).map(([name, counted]) => [name, Math.ceil(counted * 1.5)]),
            );
            shares = new NodeShares({ startedAt: at + 1, inUseMs: 1000, grantedBefore: true, noted });
            at += 1;
            continue;
          }
          if (event === "node restart") enforced.delete(node);
          const mine = enforced.get(node);
          const held = mine && mine.until > at ? mine.share : 0;
          const grant = shares.renew(limit, ask(node, want, held), at);
          enforced.set(node, { share: grant.granted, until: grant.expiresAt });
          let live = 0;
          for (const { share, until } of enforced.values()) if (until > at) live += share;
          expect(live).toBeLessThanOrEqual(limit);
        }
      }),
    );
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

describe("standing shares ended: each slot's part counts until its node renews or every node has stopped", () => {
  it("the parts count as grants until confirmed; a slot's renewal stands for its part; confirmed, they end", () => {
    const shares = started();
    // Limit 4 over 4 slots: a part of 1 each.
    shares.standDown(4, 4, "s1");
    expect(shares.counted(START)).toBe(4);
    expect(shares.renew(4, ask("x", 4), START).granted).toBe(0);
    // Slot 2's node renews (it uses nothing): its part is no longer counted.
    shares.renew(4, { node: "b", slot: 2, held: 0, inUse: 0, want: 0 }, START + 10);
    expect(shares.renew(4, ask("x", 4), START + 20).granted).toBe(1);
    // Every node has read that the parts ended, or stops by START + 1000: then all of it is free.
    shares.confirmStandDown(START + 1000);
    expect(shares.counted(START + 999)).toBe(4);
    expect(shares.renew(4, ask("x", 4, 1), START + 1000).granted).toBe(4);
  });

  it("tells when the last share given ends, so that the limits may stand again", () => {
    const shares = started();
    expect(shares.liveUntil(START)).toBeNull();
    const grant = shares.renew(3, ask("a", 3), START);
    expect(shares.liveUntil(START)).toBe(grant.expiresAt);
    expect(shares.liveUntil(grant.expiresAt)).toBeNull();
    shares.standDown(3, 4, "s1");
    expect(shares.liveUntil(START)).toBe(Number.POSITIVE_INFINITY);
  });

  it("whatever the nodes report while parts are ended, what they may use never sums past the limit", () => {
    const step = fc.record({
      node: fc.integer({ min: 0, max: 5 }),
      dt: fc.integer({ min: 0, max: 3_000 }),
      want: fc.integer({ min: 0, max: 12 }),
    });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.array(step, { maxLength: 40 }), (limit, steps) => {
        const shares = started();
        shares.standDown(limit, 4, "s1");
        const graceEnds = START + 1000;
        shares.confirmStandDown(graceEnds);
        // Slots 0–3 belong to nodes 0–3, which used their parts until their first renewal (or the grace).
        const part = (slot: number) => standingShare(limit, 4, slot, "s1");
        const renewed = new Set<number>();
        const enforced = new Map<number, { share: number; until: number }>();
        let at = START;
        for (const { node, dt, want } of steps) {
          at += dt;
          const mine = enforced.get(node);
          const slot = node < 4 ? node : null;
          const standing = slot !== null && !renewed.has(slot) && at < graceEnds ? part(slot) : 0;
          const held = Math.max(standing, mine && mine.until > at ? mine.share : 0);
          const grant = shares.renew(limit, { node: `n${node}`, slot, held, inUse: 0, want }, at);
          if (slot !== null) renewed.add(slot);
          enforced.set(node, { share: grant.granted, until: grant.expiresAt });
          let live = 0;
          for (const [other, { share, until }] of enforced) if (until > at && other !== node) live += share;
          live += grant.granted;
          for (let s = 0; s < 4; s++) if (!renewed.has(s) && at < graceEnds) live += part(s);
          expect(live).toBeLessThanOrEqual(limit);
        }
      }),
    );
  });
});

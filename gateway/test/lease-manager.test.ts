// The node's lease manager against a stub `/leases` on a fake clock (no wrangler, no real waits):
// `node --test gateway/test/lease-manager.test.ts`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Limits } from "../../src/platform/gateway-rules.ts";
import type { Clock, TimerHandle } from "../clock.ts";
import { type LeaseEntry, LeaseManager, type LeaseOptions } from "../lease-manager.ts";
import type { LeaseGrant, LeaseRenewal } from "../wire.ts";

const START = Date.parse("2026-01-01T00:00:00.000Z");
const quiet = { error() {} };
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A clock whose time moves only when the test advances it; its timers run in order of their due times. */
function fakeClock() {
  let at = START;
  let nextId = 1;
  const timers = new Map<number, { due: number; every: number | null; callback: () => void }>();
  const add = (callback: () => void, ms: number, every: number | null) => {
    const id = nextId++;
    timers.set(id, { due: at + ms, every, callback });
    return id;
  };
  const clear = (id: TimerHandle | null | undefined) => {
    if (typeof id === "number") timers.delete(id);
  };
  const clock: Clock = {
    now: () => at,
    setTimeout: (callback, ms) => add(callback, ms, null),
    clearTimeout: clear,
    setInterval: (callback, ms) => add(callback, ms, ms),
    clearInterval: clear,
    setImmediate: (callback) => {
      setImmediate(callback);
    },
  };
  /** Moves the time `ms` on, running each timer due meanwhile (and the calls it starts) at its due time. */
  async function advance(ms: number): Promise<void> {
    const until = at + ms;
    for (;;) {
      const next = [...timers].filter(([, t]) => t.due <= until).sort(([, a], [, b]) => a.due - b.due)[0];
      if (!next) break;
      const [id, timer] = next;
      at = timer.due;
      if (timer.every === null) timers.delete(id);
      else timer.due += timer.every;
      timer.callback();
      for (let i = 0; i < 3; i++) await turn();
    }
    at = until;
    for (let i = 0; i < 3; i++) await turn();
  }
  return { clock, advance };
}

/**
 * What the stub gate grants a renewal, given the sub-user's limits: by default what it wants (null for no limit),
 * for a minute (no node waits).
 */
type Answer = (renewal: LeaseRenewal, limits: Limits) => { concurrent: number | null; rps: number | null; ms?: number };
const grantWant: Answer = ({ want }, limits) => ({
  concurrent: limits.concurrent === null ? null : want.concurrent,
  rps: limits.rps === null ? null : want.rps,
});

/**
 * A lease manager on a fake clock and a stub `/leases`. `slot`: the node's slot (null: none). Each call is kept with
 * the shares the node enforced when it left (`enforced`, by sub-user name).
 */
function setup({
  slot = 3,
  answer = grantWant,
  ...options
}: { slot?: number | null; answer?: Answer } & LeaseOptions = {}) {
  const { clock, advance } = fakeClock();
  const calls: Array<{ leases: LeaseRenewal[]; slot: number | null; enforced: Map<string, Limits | null> }> = [];
  const entries = new Map<string, LeaseEntry>();
  const api = {
    async leases(leases: LeaseRenewal[], callSlot: number | null = null) {
      const enforced = new Map(leases.map(({ name }) => [name, entries.get(name)?.share(clock.now()) ?? null]));
      calls.push({ leases: structuredClone(leases), slot: callSlot, enforced });
      return {
        leases: leases.map((renewal): LeaseGrant => {
          const limits = entries.get(renewal.name)?.limits ?? { concurrent: null, rps: null };
          const { concurrent, rps, ms = 60_000 } = answer(renewal, limits);
          return {
            name: renewal.name,
            product: renewal.product,
            known: true,
            concurrent,
            rps,
            expires_at: new Date(clock.now() + ms).toISOString(),
            version: 1,
          };
        }),
      };
    },
  };
  const manager = new LeaseManager({ api, slot: () => slot, clock, log: quiet, ...options });
  const entry = (name: string, limits: Limits = { concurrent: 200, rps: 200 }) => {
    const made = manager.entry(name, "residential", limits);
    entries.set(name, made);
    return made;
  };
  /** A request on a new connection, decided as the node decider does; resolves whether it was admitted. */
  async function request(made: LeaseEntry): Promise<boolean> {
    made.attempted.add(clock.now());
    made.pending += 1;
    const ready = await manager.ready(made).finally(() => (made.pending -= 1));
    const share = ready ? made.share(clock.now()) : null;
    if (!share || (share.rps !== null && made.admitted.count(clock.now()) >= share.rps)) return false;
    if (share.concurrent !== null && made.open >= share.concurrent) return false;
    made.admitted.add(clock.now());
    manager.opened(made);
    return true;
  }
  return { clock, advance, calls, manager, entry, peek: (name: string) => entries.get(name), request };
}

describe("lease manager: what a node asks for", () => {
  it("a node with a slot asks for its demand, a tenth more and at least one more, and keeps a minimum", async () => {
    const { calls, entry, request, manager } = setup();
    assert.equal(await request(entry("s1")), true);
    // One request: demand 1 of each; the minimum is a slot's part of 200 (at 64 slots until a standing share shows
    // the split: 3), at most 5.
    assert.deepEqual(calls[0]?.leases[0]?.want, { concurrent: 3, rps: 3 });
    assert.equal(calls[0]?.slot, 3);
    // A standing share of 25 of 200 shows a split of 8 slots: the minimum becomes 5 (at most 5).
    entry("s2").standing = { concurrent: 25, rps: 25 };
    await request(entry("s3"));
    assert.deepEqual(calls[1]?.leases[0]?.want, { concurrent: 5, rps: 5 });
    manager.stop();
  });

  it("a node with no slot asks for its demand with 5 more (no fleet to share with that it knows of)", async () => {
    const { calls, entry, request, manager } = setup({ slot: null });
    await request(entry("s1"));
    // rps: the last quarter second's one request, four times over (4), a tenth more and 5.
    assert.deepEqual(calls[0]?.leases[0]?.want, { concurrent: 7, rps: 10 });
    assert.equal(calls[0]?.slot, null);
    manager.stop();
  });

  it("a node with a slot reads a rise off a quarter second only once it holds 4 requests", async () => {
    const { calls, entry, manager } = setup();
    const three = entry("s1");
    for (let i = 0; i < 3; i++) three.attempted.add(START);
    await manager.ready(three);
    assert.equal(calls[0]?.leases[0]?.want.rps, 4, "3 requests: 3 a second, and one more");
    const four = entry("s2");
    for (let i = 0; i < 4; i++) four.attempted.add(START);
    await manager.ready(four);
    assert.equal(calls[1]?.leases[0]?.want.rps, 18, "4 in a quarter second: 16 a second, and a tenth more");
    manager.stop();
  });

  it("estimates connection demand from new connections a second times how long they stay open", async () => {
    const { advance, calls, entry, manager } = setup();
    const made = entry("s1", { concurrent: 1000, rps: null });
    await manager.ready(made);
    // 10 new connections, all still open a second on: a hold time of a second (open ÷ new a second).
    for (let i = 0; i < 10; i++) manager.opened(made);
    await advance(250);
    // 8 more in the last quarter second: 32 a second arriving, each open a second, though 18 are open.
    for (let i = 0; i < 8; i++) manager.opened(made);
    made.waiting.add(START + 250);
    assert.equal(await manager.grow(made, "concurrent"), true);
    assert.equal(calls.at(-1)?.leases[0]?.want.concurrent, Math.ceil((32 + 1) * 1.1));
    manager.stop();
  });
});

describe("lease manager: giving shares back", () => {
  /** A share of `rps` requests a second (and `requests` of them made half a second before), with nothing open. */
  async function busy(requests: number, options: { slot?: number | null } = {}) {
    const setUp = setup(options);
    const made = setUp.entry("s1", { concurrent: null, rps: 1000 });
    for (let i = 0; i < requests; i++) made.attempted.add(START - 500);
    await setUp.manager.ready(made);
    return { ...setUp, made };
  }

  it("gives a share back early once demand fell well below it, lowering what it enforces before the call", async () => {
    const { advance, calls, made, manager } = await busy(200);
    assert.deepEqual(calls[0]?.leases[0]?.want, { concurrent: 0, rps: 220 });
    await advance(400);
    assert.equal(calls.length, 1, "while its requests are in the last second, its demand stands");
    await advance(100);
    assert.equal(calls.length, 2, "given back at the next look once they left it");
    const giveBack = calls[1];
    assert.deepEqual(giveBack?.leases[0]?.want, { concurrent: 0, rps: 5 }, "its minimum: 5 (a slot's part: 15)");
    assert.deepEqual(giveBack?.leases[0]?.held, { concurrent: 0, rps: 5 }, "held: the lowered share");
    assert.deepEqual(giveBack?.enforced.get("s1"), { concurrent: null, rps: 5 }, "enforced before the call left");
    assert.deepEqual(made.grant, { concurrent: null, rps: 5 });
    await advance(5000);
    assert.equal(calls.length, 2, "nothing more to give back");
    manager.stop();
  });

  it("keeps a share its demand fell within its swing of (70 % of it, and 4 × its square root)", async () => {
    const { advance, calls, made, manager } = await busy(91);
    assert.equal(calls[0]?.leases[0]?.want.rps, 101);
    await advance(200);
    for (let i = 0; i < 59; i++) made.attempted.add(START + 200);
    await advance(550);
    // From 500 ms, 59 a second: a want of 65, under 70 % of 101 but only 36 below it (4 × √101 ≈ 40): kept.
    assert.equal(calls.length, 1);
    await advance(150);
    for (let i = 0; i < 50; i++) made.attempted.add(START + 900);
    await advance(350);
    // From 1,200 ms, 50 a second: a want of 55, 46 below: given back.
    assert.equal(calls.length, 2);
    assert.equal(calls[1]?.leases[0]?.want.rps, 55);
    manager.stop();
  });

  it("a node with no slot lets a share end rather than giving it back early", async () => {
    const { advance, calls, manager } = await busy(200, { slot: null });
    assert.deepEqual(calls[0]?.leases[0]?.want, { concurrent: 0, rps: 225 });
    await advance(3000);
    assert.equal(calls.length, 1);
    manager.stop();
  });

  it("confirms at once a share granted below what it reported held (grown from a standing share)", async () => {
    const { calls, entry, manager } = setup({ answer: () => ({ concurrent: 2, rps: 2 }) });
    const made = entry("s1");
    made.standing = { concurrent: 5, rps: 5 };
    manager.opened(made);
    for (let i = 0; i < 6; i++) made.attempted.add(START - 500);
    assert.equal(await manager.grow(made, "rps"), true);
    for (let i = 0; i < 10; i++) await turn();
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[0]?.leases[0]?.want, { concurrent: 5, rps: 7 });
    assert.deepEqual(calls[0]?.leases[0]?.held, { concurrent: 5, rps: 5 }, "the standing share, in force till then");
    assert.deepEqual(calls[1]?.leases[0]?.held, { concurrent: 2, rps: 2 }, "the lower share, confirmed");
    assert.equal(made.standing, null);
    manager.stop();
  });
});

describe("lease manager: calls", () => {
  it("asks of one turn leave as one call; a grow waits for a call under way; grows at most every 50 ms", async () => {
    const { advance, calls, entry, manager, request } = setup();
    const [a, b] = [entry("s1"), entry("s2")];
    await Promise.all([request(a), request(b)]);
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.leases.length, 2);
    const grows = [manager.grow(a, "rps"), manager.grow(a, "rps")];
    assert.deepEqual(await Promise.all(grows), [true, true], "the second waits for the first's call");
    assert.equal(calls.length, 2);
    assert.equal(await manager.grow(a, "rps"), false, "grown within the last 50 ms");
    await advance(50);
    assert.equal(await manager.grow(a, "rps"), true);
    assert.equal(calls.length, 3);
    manager.stop();
  });

  it("never enforces more than the gate granted, and reports held at least what it enforces", async () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const granted = new Map<string, { concurrent: number; rps: number }>();
    const { advance, calls, entry, peek, manager, request, clock } = setup({
      answer: ({ name, want }) => {
        const grant = {
          concurrent: Math.floor(random() * (want.concurrent + 1)),
          rps: Math.floor(random() * (want.rps + 1)),
        };
        granted.set(name, grant);
        return { ...grant, ms: random() < 0.5 ? 5000 : 60_000 };
      },
    });
    const names = ["s1", "s2", "s3"];
    for (let step = 0; step < 400; step++) {
      const made = entry(names[Math.floor(random() * names.length)] as string);
      const roll = random();
      if (roll < 0.5) {
        if (await request(made)) {
          const opened = made;
          clock.setTimeout(() => manager.closed(opened), random() * 3000);
        }
      } else if (roll < 0.6) manager.cut(made.name, "residential");
      else if (roll < 0.7) await manager.grow(made, random() < 0.5 ? "rps" : "concurrent");
      await advance(random() * 200);
      for (const name of names) {
        const share = peek(name)?.share(clock.now());
        const grant = granted.get(name);
        if (!share || !grant) continue;
        assert.ok((share.concurrent ?? 0) <= grant.concurrent && (share.rps ?? 0) <= grant.rps, `step ${step}`);
      }
    }
    for (const { leases, enforced } of calls) {
      for (const { name, held } of leases) {
        const share = enforced.get(name);
        if (share) assert.ok((share.concurrent ?? 0) <= held.concurrent && (share.rps ?? 0) <= held.rps);
      }
    }
    assert.ok(calls.length > 20);
    manager.stop();
  });
});

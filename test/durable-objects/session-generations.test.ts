import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SubuserGate } from "../../src/durable-objects/subuser-gate";
import {
  GENERATIONS_KEPT_MS,
  GENERATIONS_PER_SUBUSER,
  SessionGenerations,
} from "../../src/durable-objects/subuser-gate/session-generations";
import { keyHash, sessionKey } from "../../src/platform/sticky-sessions";
import { createAccount } from "../helpers/accounts";
import { createSubuser, gateOf, username } from "../helpers/subusers";

const T0 = 1_800_000_000_000;
const hash = (n: number) => n.toString(16).padStart(16, "0");

/** A gate's storage of its own, for the generations alone (the gate's other parts leave it be). */
function freshGate() {
  return env.SUBUSER_GATE.get(env.SUBUSER_GATE.idFromName(`generations-${crypto.randomUUID()}`));
}

const storedRows = (sql: SqlStorage) =>
  sql.exec<{ n: number }>("SELECT count(*) AS n FROM session_generations").one().n;

afterEach(() => {
  vi.useRealTimers();
});

describe("SessionGenerations: a sub-user's sticky-session keys moved by termination", () => {
  it("a bump moves a key to the terminated generation + 1 once: a retry, or an older generation's, changes nothing", async () => {
    await runInDurableObject(freshGate(), (_gate: SubuserGate, state) => {
      const generations = new SessionGenerations(state.storage);
      const key = hash(1);
      expect(generations.generationOf(key)).toBe(0);
      expect(generations.bump(key, 0, T0)).toEqual({ generation: 1, changed: true });
      expect(generations.bump(key, 0, T0 + 1000)).toEqual({ generation: 1, changed: false });
      expect(generations.view()).toEqual({ [key]: 1 });
      // Generation 1's session terminated: 2. A late retry of generation 0's changes nothing.
      expect(generations.bump(key, 1, T0 + 2000)).toEqual({ generation: 2, changed: true });
      expect(generations.bump(key, 0, T0 + 3000)).toEqual({ generation: 2, changed: false });
      // A termination of a generation the gate no longer knows (its entry was dropped) still moves past it.
      expect(generations.bump(hash(2), 4, T0)).toEqual({ generation: 5, changed: true });
      expect(
        state.storage.sql
          .exec("SELECT key_hash, generation, changed_at FROM session_generations ORDER BY key_hash")
          .toArray(),
      ).toEqual([
        { key_hash: key, generation: 2, changed_at: T0 + 2000 },
        { key_hash: hash(2), generation: 5, changed_at: T0 },
      ]);
      // A restart reads them back.
      expect(new SessionGenerations(state.storage).view()).toEqual({ [key]: 2, [hash(2)]: 5 });
    });
  });

  it("keeps at most 1,000 keys, dropping those changed longest ago, and each 30 days after its change", async () => {
    await runInDurableObject(freshGate(), (_gate: SubuserGate, state) => {
      const generations = new SessionGenerations(state.storage);
      for (let i = 0; i < GENERATIONS_PER_SUBUSER; i++) generations.bump(hash(i), 0, T0 + i);
      expect(Object.keys(generations.view())).toHaveLength(GENERATIONS_PER_SUBUSER);
      // One more: the oldest goes, the one just bumped stays.
      generations.bump(hash(5000), 0, T0 + 5000);
      const view = generations.view();
      expect(Object.keys(view)).toHaveLength(GENERATIONS_PER_SUBUSER);
      expect(view[hash(0)]).toBeUndefined();
      expect(view[hash(1)]).toBe(1);
      expect(view[hash(5000)]).toBe(1);
      expect(storedRows(state.storage.sql)).toBe(GENERATIONS_PER_SUBUSER);
      // A dropped key is back at generation 0: its next termination moves it to 1 again.
      expect(generations.generationOf(hash(0))).toBe(0);

      // 30 days after its change a key is dropped; the purge says when the next one is due.
      expect(generations.purge(T0 + 1 + GENERATIONS_KEPT_MS - 1)).toEqual({
        dropped: 0,
        next: T0 + 1 + GENERATIONS_KEPT_MS,
      });
      expect(generations.purge(T0 + 10 + GENERATIONS_KEPT_MS)).toEqual({
        dropped: 10,
        next: T0 + 11 + GENERATIONS_KEPT_MS,
      });
      expect(generations.generationOf(hash(10))).toBe(0);
      expect(generations.purge(T0 + 5000 + GENERATIONS_KEPT_MS)).toEqual({ dropped: 990, next: null });
      expect(generations.view()).toEqual({});
      expect(storedRows(state.storage.sql)).toBe(0);
    });
  });
});

describe("the gate's snapshot carries the generations", () => {
  it("terminating a key's session bumps it in the snapshot under a new version; a retry changes nothing", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const gate = gateOf(subuser);
    const before = await gate.snapshot();
    expect(before).toMatchObject({ generations: {}, accountId: account.id, subuserId: subuser.id });
    const user = username(subuser.name, "type-res-region-us-session-gen1-sesstime-10");
    const key = keyHash(sessionKey(user));
    const ending = { id: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", key: sessionKey(user), generation: 0 };

    expect(await gate.terminateSession(ending)).toEqual({ book: null, generation: 1 });
    const after = await gate.snapshot();
    expect(after?.generations).toEqual({ [key]: 1 });
    expect(after?.version).toBeGreaterThan(before?.version as number);

    // The same termination again (a second DELETE, the cron): same generation, same version.
    expect(await gate.terminateSession(ending)).toEqual({ book: null, generation: 1 });
    expect((await gate.snapshot())?.version).toBe(after?.version);

    // The key is matched case-insensitively (the session key is the lower-cased username).
    expect(await gate.terminateSession({ ...ending, key: user.toUpperCase(), generation: 1 })).toEqual({
      book: null,
      generation: 2,
    });
    const next = await gate.snapshot();
    expect(next?.generations).toEqual({ [key]: 2 });
    expect(next?.version).toBeGreaterThan(after?.version as number);
  });

  it("a session without a key that the gate did not start bumps nothing", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const gate = gateOf(subuser);
    const before = await gate.snapshot();
    expect(await gate.terminateSession({ id: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" })).toEqual({
      book: null,
      generation: null,
    });
    expect(await gate.snapshot()).toEqual(before);
  });

  it("the gate's alarm drops generations 30 days after their change, and the snapshot says so under a new version", async () => {
    const account = await createAccount({ bandwidthGb: 1 });
    const subuser = await createSubuser(account);
    const gate = gateOf(subuser);
    const key = sessionKey(username(subuser.name, "type-res-region-us-session-old1-sesstime-5"));
    await gate.terminateSession({ id: "ses_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", key, generation: 0 });
    const bumped = await gate.snapshot();
    expect(bumped?.generations).toEqual({ [keyHash(key)]: 1 });

    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + GENERATIONS_KEPT_MS - 60_000);
    await runDurableObjectAlarm(gate);
    expect((await gate.snapshot())?.generations).toEqual({ [keyHash(key)]: 1 });
    vi.setSystemTime(Date.now() + 120_000);
    await runDurableObjectAlarm(gate);
    const purged = await gate.snapshot();
    expect(purged?.generations).toEqual({});
    expect(purged?.version).toBeGreaterThan(bumped?.version as number);
  });
});

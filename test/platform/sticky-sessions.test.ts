import { describe, expect, it } from "vitest";
import { timeOfId } from "../../src/platform/ids";
import { generationOf, keyHash, sessionIdAt, sessionKey, stickyExit } from "../../src/platform/sticky-sessions";

const pool = Array.from({ length: 254 }, (_, i) => `198.51.100.${i + 1}`);
const keys = Array.from({ length: 2_000 }, (_, i) =>
  sessionKey(`user_s${i}-type-res-region-us-session-a${i}-sesstime-30`),
);

describe("sticky sessions at the node (platform/sticky-sessions)", () => {
  it("the same key, generation and pool give the same exit wherever it is computed", () => {
    for (const key of keys.slice(0, 50)) {
      expect(stickyExit(pool, key, 0)).toBe(stickyExit([...pool].reverse(), key, 0));
    }
  });

  it("a new generation (a termination) always gives the username a new exit", () => {
    for (const key of keys) {
      const exits = [0, 1, 2].map((generation) => stickyExit(pool, key, generation));
      expect(exits[1]).not.toBe(exits[0]);
      expect(exits[2]).not.toBe(exits[1]);
    }
  });

  it("an exit that leaves the pool moves only the sessions it held", () => {
    const before = new Map(keys.map((key) => [key, stickyExit(pool, key, 0)]));
    const gone = before.get(keys[0] as string) as string;
    const smaller = pool.filter((exit) => exit !== gone);
    for (const key of keys) {
      const after = stickyExit(smaller, key, 0);
      if (before.get(key) === gone) expect(after).not.toBe(gone);
      else expect(after).toBe(before.get(key));
    }
  });

  it("sessions spread over the pool (no exit holds more than 3× its even share of 2,000 keys)", () => {
    const counts = new Map<string, number>();
    for (const key of keys)
      counts.set(stickyExit(pool, key, 0) as string, (counts.get(stickyExit(pool, key, 0) as string) ?? 0) + 1);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(Math.ceil((3 * keys.length) / pool.length));
  });

  it("a lone candidate is every generation's exit; no candidate, no exit", () => {
    expect(stickyExit(["203.0.113.9"], "k", 3)).toBe("203.0.113.9");
    expect(stickyExit([], "k", 0)).toBeNull();
  });

  it("the key is the username, case-insensitive; a snapshot's generations are by key hash, 0 when absent", () => {
    expect(sessionKey("USER_Abc-type-res")).toBe("user_abc-type-res");
    expect(keyHash("k")).toMatch(/^[0-9a-f]{16}$/);
    expect(generationOf({ [keyHash("k")]: 2 }, "k")).toBe(2);
    expect(generationOf({}, "k")).toBe(0);
    expect(generationOf(undefined, "k")).toBe(0);
  });

  it("a session's id is a ses_ ULID whose time is its start, the same for the same key, generation and start", () => {
    const at = Date.UTC(2026, 10, 28, 12, 0, 0, 123);
    const id = sessionIdAt("k", 0, at);
    expect(id).toMatch(/^ses_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(timeOfId(id)).toBe(at);
    expect(sessionIdAt("k", 0, at)).toBe(id);
    expect(new Set([sessionIdAt("k", 1, at), sessionIdAt("k2", 0, at), sessionIdAt("k", 0, at + 1), id]).size).toBe(4);
  });
});

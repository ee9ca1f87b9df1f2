import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseUsername as parseAtNode } from "../../gateway/username.mjs";
import { parseUsername as parseAtApi } from "../../src/domain/gateway/username";

// The gateway node decides the username grammar itself: it must agree with the API's parser on every username.

const PREFIX = "user";

/** The API's answer in the node's shape (the decision's `target` names the session `session_id`). */
function apiAnswer(username: string) {
  const parsed = parseAtApi(username, PREFIX);
  if (!parsed.ok) return parsed;
  const { sessionId, ...target } = parsed.value.target;
  return { ok: true, value: { ...parsed.value, target: { ...target, session_id: sessionId } } };
}

const lowerAlnum = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789"), minLength: min, maxLength: max });
const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: min, maxLength: max });

const nearly = (valid: fc.Arbitrary<string>, invalid: fc.Arbitrary<string>) =>
  fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: invalid, weight: 1 });

/** Null mostly, now and then a value. */
const seldom = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(null), weight: 8 }, { arbitrary: value, weight: 1 });

/** Values near each segment's rules: mostly valid, sometimes just outside them. */
const SEGMENT_VALUES: Record<string, fc.Arbitrary<string>> = {
  type: nearly(fc.constantFrom("res", "mob"), fc.constantFrom("isp", "RES", "")),
  region: nearly(
    fc.constantFrom("us", "de", "gb", "fr", "jp"),
    fc.oneof(fc.constantFrom("xx", "uk", "US"), lowerAlnum(1, 3)),
  ),
  state: nearly(lowerAlnum(1, 3), lowerAlnum(4, 5)),
  city: nearly(lowerAlnum(1, 12), fc.constantFrom("new_york", "a".repeat(41))),
  asn: nearly(digits(1, 9), fc.constantFrom("4294967295", "4294967296", "9999999999", "12345678901", "-1")),
  session: nearly(lowerAlnum(1, 8), fc.constantFrom("a".repeat(33), "Ab")),
  sesstime: nearly(
    fc.integer({ min: 1, max: 30 }).map(String),
    fc.oneof(fc.integer({ min: 0, max: 70 }).map(String), digits(1, 5)),
  ),
};
/** How often each segment is left out (1 in n). */
const PRESENT = { type: 12, region: 12, state: 8, city: 2, asn: 3, session: 10, sesstime: 10 };
const SEGMENTS = Object.keys(SEGMENT_VALUES) as Array<keyof typeof PRESENT>;

/** A username from segments in the grammar's order (each kept or dropped), now and then shuffled or broken. */
const username = fc
  .record({
    prefix: nearly(fc.constant("user"), fc.constantFrom("usr", "User", "")),
    name: nearly(lowerAlnum(1, 12), fc.constantFrom("S1abc", "a".repeat(33), "")),
    segments: fc.tuple(
      ...SEGMENTS.map((key) =>
        fc.option(
          SEGMENT_VALUES[key]!.map((value) => [key, value] as const),
          { freq: PRESENT[key] },
        ),
      ),
    ),
    swap: seldom(fc.tuple(fc.nat(6), fc.nat(6))),
    extra: seldom(fc.constantFrom("-foo-bar", "-type", "--", "-session-x", "-asn-1", "-")),
  })
  .map(({ prefix, name, segments, swap, extra }) => {
    const kept = segments.filter((segment) => segment !== null).map(([key, value]) => `${key}-${value}`);
    if (swap && kept.length > 1) {
      const [a, b] = [swap[0] % kept.length, swap[1] % kept.length];
      [kept[a], kept[b]] = [kept[b]!, kept[a]!];
    }
    return `${prefix}_${[name, ...kept].join("-")}${extra ?? ""}`;
  });

describe("the gateway node's username grammar", () => {
  it("agrees with the API's parser on generated usernames, valid and invalid", () => {
    let valid = 0;
    fc.assert(
      fc.property(username, (text) => {
        const atNode = parseAtNode(text, PREFIX);
        expect(atNode).toEqual(apiAnswer(text));
        if (atNode.ok) valid++;
      }),
      { numRuns: 5000 },
    );
    // The generator must reach both sides of the grammar.
    expect(valid).toBeGreaterThan(200);
    expect(valid).toBeLessThan(4800);
  });

  it("agrees on arbitrary strings", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (tail) => {
        const text = `user_${tail}`;
        expect(parseAtNode(text, PREFIX)).toEqual(apiAnswer(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("gives every refusal code of the grammar", () => {
    const codes = [
      ["user_abc-type-res-region-us-state-ca-city-la-asn-7922-session-s1-sesstime-10", null],
      ["user_abc-type-res", "bad-username"],
      ["user_abc-type-res-region-xx", "unknown-region"],
      ["user_abc-type-res-state-ca", "state-without-region"],
      ["user_abc-type-res-region-us-city-la", "city-without-state"],
      ["user_abc-type-res-region-us-session-s1", "session-incomplete"],
      ["user_abc-type-res-region-us-session-s1-sesstime-31", "sesstime-out-of-range"],
    ] as const;
    for (const [text, code] of codes) {
      const atNode = parseAtNode(text, PREFIX);
      expect(atNode.ok ? null : atNode.error, text).toBe(code);
      expect(atNode).toEqual(apiAnswer(text));
    }
  });
});

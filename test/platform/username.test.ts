import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  buildUsername,
  type GatewayTarget,
  MAX_ASN,
  MAX_SESSTIME_MINUTES,
  parseUsername,
} from "../../src/domain/gateway/username";

const parse = (username: string) => parseUsername(username, "user");

describe("gateway username grammar (reference facts)", () => {
  it("parses every segment in order", () => {
    const result = parse("user_s1a2b3c4d5e-type-res-region-us-state-ca-city-la-asn-7922-session-abc123-sesstime-30");
    expect(result).toEqual({
      ok: true,
      value: {
        name: "s1a2b3c4d5e",
        product: "residential",
        target: { type: "res", region: "us", state: "ca", city: "la", asn: 7922, sessionId: "abc123", sesstime: 30 },
      },
    });
  });

  it("parses a minimal mobile username (rotating)", () => {
    const result = parse("user_abc-type-mob-region-de");
    expect(result.ok && result.value.product).toBe("mobile");
    expect(result.ok && result.value.target.sessionId).toBeNull();
  });

  it.each([
    ["s1-type-res-region-us", "bad-username"], // missing prefix
    ["other_s1-type-res-region-us", "bad-username"],
    ["user_s1-region-us-type-res", "bad-username"], // wrong order
    ["user_s1-type-res-region-us-color-red", "bad-username"], // unknown segment
    ["user_s1-type-res-region-US", "bad-username"], // bad characters
    ["user_S1-type-res-region-us", "bad-username"],
    ["user_s1-type-dc-region-us", "bad-username"],
    ["user_s1-type-res-region-us-region-gb", "bad-username"], // repeated
    ["user_s1-type-res", "bad-username"], // region required
    ["user_s1-region-us", "bad-username"], // type required
    ["user_s1-type-res-region-us-asn", "bad-username"], // dangling key
    ["user_s1-type-res-region-us-asn-99999999999", "bad-username"],
    ["user_s1-type-res-region-zz", "unknown-region"],
    ["user_s1-type-res-state-ca", "state-without-region"],
    ["user_s1-type-res-region-us-city-la", "city-without-state"],
    ["user_s1-type-res-region-us-session-abc", "session-incomplete"],
    ["user_s1-type-res-region-us-sesstime-10", "session-incomplete"],
    ["user_s1-type-res-region-us-session-abc-sesstime-31", "sesstime-out-of-range"],
    ["user_s1-type-res-region-us-session-abc-sesstime-0", "sesstime-out-of-range"],
    ["user_s1-type-mob-region-us-session-abc-sesstime-61", "sesstime-out-of-range"],
  ])("%s → %s", (username, error) => {
    expect(parse(username)).toEqual({ ok: false, error });
  });

  it("accepts mobile sessions up to 60 minutes", () => {
    expect(parse("user_s1-type-mob-region-us-session-abc-sesstime-60").ok).toBe(true);
  });
});

describe("the username builder is the parser's inverse", () => {
  const word = (max: number) => fc.stringMatching(new RegExp(`^[a-z0-9]{1,${max}}$`));
  const target: fc.Arbitrary<GatewayTarget> = fc
    .record({
      type: fc.constantFrom("res" as const, "mob" as const),
      region: fc.constantFrom("us", "de", "gb", "br", "jp"),
      state: fc.option(word(3)),
      city: fc.option(word(40)),
      asn: fc.option(fc.integer({ min: 0, max: MAX_ASN })),
      session: fc.option(fc.record({ id: word(32), minutes: fc.integer({ min: 1, max: 60 }) })),
    })
    .map(({ session, ...rest }) => ({
      ...rest,
      // A city needs its state; a session its sesstime, within the product's longest.
      city: rest.state === null ? null : rest.city,
      sessionId: session?.id ?? null,
      sesstime:
        session === null
          ? null
          : Math.min(session.minutes, MAX_SESSTIME_MINUTES[rest.type === "res" ? "residential" : "mobile"]),
    }));

  it("every target the grammar allows, built, parses back to the same name, product and target", () => {
    fc.assert(
      fc.property(word(32), target, (name, chosen) => {
        expect(parseUsername(buildUsername("user", name, chosen), "user")).toEqual({
          ok: true,
          value: { name, product: chosen.type === "res" ? "residential" : "mobile", target: chosen },
        });
      }),
      { numRuns: 1000 },
    );
  });

  it("writes the segments in the grammar's order and leaves unset ones out", () => {
    const sticky = { type: "mob", region: "de", state: null, city: null, asn: 3320, sessionId: "a1", sesstime: 60 };
    expect(buildUsername("user", "s1", sticky as GatewayTarget)).toBe(
      "user_s1-type-mob-region-de-asn-3320-session-a1-sesstime-60",
    );
  });
});

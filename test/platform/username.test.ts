import { describe, expect, it } from "vitest";
import { parseUsername } from "../../src/domain/gateway/username";

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

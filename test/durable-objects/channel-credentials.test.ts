import { describe, expect, it } from "vitest";
import {
  type ChannelCredential,
  channelDeadline,
  channelEnd,
  type KeyReview,
  reviewed,
} from "../../src/durable-objects/shared/channel-credentials";

const credential: ChannelCredential = { keyId: "key_1", tokenHash: "a", keyExpiresAt: null, tokenReplacedUntil: null };
const review = (changes: Partial<KeyReview> = {}): KeyReview => ({
  revoked: false,
  expiresAt: null,
  tokens: [{ hash: "a", until: null }],
  covers: { products: null, area: true },
  ...changes,
});

describe("a channel's credential (pure rules)", () => {
  it("a key unchanged keeps its channel open with no deadline", () => {
    const kept = reviewed(credential, review(), "residential");
    expect(channelEnd(kept, 1_000)).toBeNull();
    expect(channelDeadline(kept)).toBeNull();
  });

  it("revoked, rotated away and out of scope end the channel at once, each with its own cause", () => {
    expect(channelEnd(reviewed(credential, review({ revoked: true }), "residential"), 0)).toBe("revoked");
    expect(channelEnd(reviewed(credential, review({ tokens: [{ hash: "b", until: null }] }), "isp"), 0)).toBe(
      "rotated",
    );
    const isp = review({ covers: { products: ["isp"], area: true } });
    expect(channelEnd(reviewed(credential, isp, "residential"), 0)).toBe("scope");
    expect(channelEnd(reviewed(credential, isp, "isp"), 0)).toBeNull();
    expect(channelEnd(reviewed(credential, review({ covers: { products: null, area: false } }), "isp"), 0)).toBe(
      "scope",
    );
  });

  it("the earliest of the key's expiry and the token's grace is the deadline, and its cause is named", () => {
    const graced = reviewed(
      credential,
      review({
        expiresAt: 5_000,
        tokens: [
          { hash: "a", until: 3_000 },
          { hash: "b", until: null },
        ],
      }),
      "residential",
    );
    expect(channelDeadline(graced)).toBe(3_000);
    expect(channelEnd(graced, 2_999)).toBeNull();
    expect(channelEnd(graced, 3_000)).toBe("rotated");
    const expiring = { ...credential, keyExpiresAt: 4_000 };
    expect(channelEnd(expiring, 4_000)).toBe("expired");
  });

  it("an ended credential stays ended whatever a later review says", () => {
    const revoked = reviewed(credential, review({ revoked: true }), "residential");
    expect(channelEnd(reviewed(revoked, review(), "residential"), 0)).toBe("revoked");
  });
});

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { OWNER_TAG, ownerTag, ownerTagValid } from "../../src/platform/owner-tag";

const owner = {
  name: "s1a2b3c4d5",
  subuserId: "sub_01JAAAAAAAAAAAAAAAAAAAAAAA",
  accountId: "usr_01JAAAAAAAAAAAAAAAAAAAAAAA",
};

describe("usage owner tags (platform/owner-tag)", () => {
  it("a tag verifies for its own owner only: another name, sub-user or account fails", async () => {
    const tag = await ownerTag(env.SEALING_KEY, owner);
    expect(tag).toMatch(OWNER_TAG);
    expect(await ownerTagValid(env.SEALING_KEY, owner, tag)).toBe(true);
    for (const other of [
      { ...owner, name: "s1a2b3c4d6" },
      { ...owner, subuserId: "sub_01JAAAAAAAAAAAAAAAAAAAAAAB" },
      { ...owner, accountId: "usr_01JAAAAAAAAAAAAAAAAAAAAAAB" },
    ]) {
      expect(await ownerTagValid(env.SEALING_KEY, other, tag)).toBe(false);
    }
    expect(await ownerTagValid(env.SEALING_KEY, owner, "x".repeat(22))).toBe(false);
    expect(await ownerTagValid(env.SEALING_KEY, owner, "short")).toBe(false);
  });
});

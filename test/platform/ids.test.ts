import { describe, expect, it } from "vitest";
import { isId, newId } from "../../src/platform/ids";

describe("ids", () => {
  it("are ULIDs behind the resource prefix", () => {
    expect(newId("account")).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(newId("request")).toMatch(/^req_/);
    expect(isId("subuser", newId("subuser"))).toBe(true);
    expect(isId("subuser", newId("order"))).toBe(false);
  });

  it("are strictly increasing within one millisecond (monotonic)", () => {
    const at = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 1000 }, () => newId("order", at));
    const sorted = [...ids].sort();
    expect(ids).toEqual(sorted);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

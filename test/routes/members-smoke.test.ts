import { describe, expect, it } from "vitest";
import { createAccount } from "../helpers/accounts";
import { json } from "../helpers/http";
import { invited, memberCall, ownerOf } from "../helpers/members";

describe("smoke", () => {
  it("owner signs in, reads, invites", async () => {
    const account = await createAccount();
    const owner = await ownerOf(account);
    const me = await memberCall(owner, "GET", "/v1/users/me");
    expect(me.status, await me.clone().text()).toBe(200);
    const viewer = await invited(owner, "viewer");
    const refused = await memberCall(viewer, "POST", "/v1/subusers", { body: { label: "x", products: ["residential"] } });
    expect(refused.status).toBe(403);
    expect((await json(refused)).code).toBe("insufficient_scope");
  });
});

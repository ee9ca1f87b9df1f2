import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { admin, call, json } from "../helpers/http";
import {
  invited,
  lastMailTo,
  mailedToken,
  memberCall,
  ownerOf,
  PASSWORD,
  publicCall,
  signedIn,
  signIn,
  type TestMember,
  uniqueEmail,
} from "../helpers/members";
import { codeAt } from "../helpers/mfa";

const HOUR = 3_600_000;
afterEach(() => vi.useRealTimers());

let account: TestAccount;
let owner: TestMember;
beforeAll(async () => {
  account = await createAccount();
  owner = await ownerOf(account);
});

describe("members", () => {
  it("lists the account's people with their roles and scopes; emails are unique per account, case-insensitive", async () => {
    const viewer = await invited(owner, "viewer");
    const list = await json(await memberCall(owner, "GET", "/v1/members"));
    const ids = list.data.map((member: { id: string }) => member.id);
    expect(ids).toEqual(expect.arrayContaining([owner.id, viewer.id]));
    const shown = list.data.find((member: { id: string }) => member.id === viewer.id);
    expect(shown).toMatchObject({ role: "viewer", email: viewer.email, mfa_enabled: false });
    expect(shown.scopes.billing).toBe("read");
    expect(list.data.find((member: { id: string }) => member.id === owner.id).scopes).toBeNull();
    // The same address in capitals is the same person: 409.
    const again = await memberCall(owner, "POST", "/v1/invitations", {
      body: { email: viewer.email.toUpperCase(), role: "developer" },
    });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("member_exists");
    // Another account may have the same address.
    const other = await createAccount();
    const made = await admin("POST", `/accounts/${other.id}/members`, {
      email: viewer.email,
      name: "Twin",
      password: PASSWORD,
    });
    expect(made.status).toBe(201);
  });

  it("people belong to the live account: a sandbox key is refused 403 live_key_required", async () => {
    const { sandboxOf } = await import("../helpers/sandbox");
    const sandbox = await sandboxOf(account);
    for (const [method, path, body] of [
      ["GET", "/v1/members", undefined],
      ["POST", "/v1/invitations", { email: uniqueEmail(), role: "viewer" }],
    ] as const) {
      const response = await call(method, path, { token: sandbox.token, body });
      expect(response.status, path).toBe(403);
      expect((await json(response)).code).toBe("live_key_required");
    }
  });

  it("another account's member answers like one never made (404 member_not_found)", async () => {
    const other = await ownerOf(await createAccount());
    for (const id of [other.id, "mem_01JD2W6Q6J5E4V3N0Z9Y8X7W6V", "nonsense"]) {
      const response = await memberCall(owner, "GET", `/v1/members/${id}`);
      expect(response.status).toBe(404);
      expect((await json(response)).code).toBe("member_not_found");
    }
    const patch = await memberCall(owner, "PATCH", `/v1/members/${other.id}`, { body: { role: "viewer" } });
    expect(patch.status).toBe(404);
  });

  it("a role change is in force from the member's next request", async () => {
    const member = await invited(owner, "viewer");
    const before = await memberCall(member, "POST", "/v1/subusers", {
      body: { label: "role-change", products: ["residential"] },
    });
    expect(before.status).toBe(403);
    const changed = await memberCall(owner, "PATCH", `/v1/members/${member.id}`, { body: { role: "developer" } });
    expect(changed.status).toBe(200);
    expect((await json(changed)).role).toBe("developer");
    const after = await memberCall(member, "POST", "/v1/subusers", {
      body: { label: "role-change", products: ["residential"] },
    });
    expect(after.status, await after.clone().text()).toBe(201);
  });

  it("nobody grants more than they have: an admin invites developers and viewers, not admins, owners or billing", async () => {
    const adminMember = await invited(owner, "admin");
    for (const role of ["owner", "admin", "billing"]) {
      const response = await memberCall(adminMember, "POST", "/v1/invitations", {
        body: { email: uniqueEmail(), role },
      });
      expect(response.status, role).toBe(403);
      expect((await json(response)).code).toBe("insufficient_scope");
    }
    const developer = await invited(adminMember, "developer");
    // An admin may change a developer, not an owner or another admin, nor make anyone an admin.
    expect(
      (await memberCall(adminMember, "PATCH", `/v1/members/${developer.id}`, { body: { role: "viewer" } })).status,
    ).toBe(200);
    expect(
      (await memberCall(adminMember, "PATCH", `/v1/members/${developer.id}`, { body: { role: "admin" } })).status,
    ).toBe(403);
    expect(
      (await memberCall(adminMember, "PATCH", `/v1/members/${owner.id}`, { body: { role: "viewer" } })).status,
    ).toBe(403);
    expect((await memberCall(adminMember, "DELETE", `/v1/members/${owner.id}`)).status).toBe(403);
    // A developer or viewer manages nobody (no members:write).
    const viewer = await invited(owner, "viewer");
    const refused = await memberCall(viewer, "POST", "/v1/invitations", {
      body: { email: uniqueEmail(), role: "viewer" },
    });
    expect(refused.status).toBe(403);
    expect((await json(refused)).code).toBe("insufficient_scope");
  });

  it("a key scoped to members:write cannot make a member stronger than itself", async () => {
    const key = await json(
      await call("POST", "/v1/api-keys", {
        token: account.token,
        body: { name: "people", scopes: { members: "write" } },
      }),
    );
    const response = await call("POST", "/v1/invitations", {
      token: key.token,
      body: { email: uniqueEmail(), role: "developer" },
    });
    expect(response.status).toBe(403);
    expect((await json(response)).code).toBe("insufficient_scope");
    // A full key may (it can do everything already).
    const full = await call("POST", "/v1/invitations", {
      token: account.token,
      body: { email: uniqueEmail(), role: "admin" },
    });
    expect(full.status).toBe(201);
  });

  it("the account keeps an owner: the last one can be neither demoted nor removed (409 last_owner)", async () => {
    const lone = await ownerOf(await createAccount());
    const demote = await memberCall(lone, "PATCH", `/v1/members/${lone.id}`, { body: { role: "admin" } });
    expect(demote.status).toBe(409);
    expect((await json(demote)).code).toBe("last_owner");
    const remove = await memberCall(lone, "DELETE", `/v1/members/${lone.id}`);
    expect(remove.status).toBe(409);
    expect((await memberCall(lone, "GET", "/v1/members")).status).toBe(200);
  });

  it("a removed member's sessions end at once, and its address may be invited again", async () => {
    const member = await invited(owner, "developer");
    const removed = await memberCall(owner, "DELETE", `/v1/members/${member.id}`);
    expect(removed.status).toBe(200);
    const after = await memberCall(member, "GET", "/v1/subusers");
    expect(after.status).toBe(401);
    expect((await signIn(member.email)).status).toBe(401);
    const again = await memberCall(owner, "POST", "/v1/invitations", { body: { email: member.email, role: "viewer" } });
    expect(again.status).toBe(201);
  });

  it("a developer sees and manages the API keys it made, no other", async () => {
    const developer = await invited(owner, "developer");
    const made = await memberCall(developer, "POST", "/v1/api-keys", { body: { name: "ci" } });
    expect(made.status, await made.clone().text()).toBe(201);
    const key = await json(made);
    // Within its role: the key it makes has its scopes at most.
    expect(key.scopes).toEqual({ subusers: "write", traffic: "write", api_keys: "write" });
    const list = await json(await memberCall(developer, "GET", "/v1/api-keys"));
    expect(list.data.map((row: { id: string }) => row.id)).toEqual([key.id]);
    const others = await memberCall(developer, "DELETE", `/v1/api-keys/${account.keyId}`);
    expect(others.status).toBe(404);
    expect((await json(others)).code).toBe("api_key_not_found");
    // Wider than its role: refused.
    const wider = await memberCall(developer, "POST", "/v1/api-keys", { body: { scopes: { billing: "read" } } });
    expect(wider.status).toBe(403);
    // The key it made is confined the same way, and a key that key makes stays the developer's.
    const keyList = await json(await call("GET", "/v1/api-keys", { token: key.token }));
    expect(keyList.data.map((row: { id: string }) => row.id)).toEqual([key.id]);
    const second = await json(await call("POST", "/v1/api-keys", { token: key.token, body: { name: "child" } }));
    const childList = await json(await call("GET", "/v1/api-keys", { token: second.token }));
    expect(childList.data.map((row: { id: string }) => row.id).sort()).toEqual([key.id, second.id].sort());
    expect((await call("DELETE", `/v1/api-keys/${account.keyId}`, { token: second.token })).status).toBe(404);
    // Made an admin, the developer's keys see every key from their next call.
    await memberCall(owner, "PATCH", `/v1/members/${developer.id}`, { body: { role: "admin" } });
    const widened = await json(await call("GET", "/v1/api-keys", { token: key.token }));
    expect(widened.data.map((row: { id: string }) => row.id)).toContain(account.keyId);
  });

  it("the audit log names the person, and the key when one was used", async () => {
    const developer = await invited(owner, "developer");
    const created = await json(
      await memberCall(developer, "POST", "/v1/subusers", {
        body: { label: "audited-by-person", products: ["residential"] },
      }),
    );
    const entries = await json(await call("GET", `/v1/audit-events?resource=${created.id}`, { token: account.token }));
    expect(entries.data[0]).toMatchObject({
      action: "subuser.created",
      actor_key: null,
      actor_member: { id: developer.id, email: developer.email },
    });
    const byKey = await json(await call("GET", "/v1/audit-events?action=api_key.created", { token: account.token }));
    expect(byKey.data.every((entry: { actor_key: string | null }) => entry.actor_key !== undefined)).toBe(true);
    const filtered = await json(
      await call("GET", `/v1/audit-events?actor_member=${developer.id}`, { token: account.token }),
    );
    expect(filtered.data.map((entry: { resource_id: string }) => entry.resource_id)).toContain(created.id);
    // An operator's entries stay `admin`, with no member.
    const operator = await json(await call("GET", "/v1/audit-events?actor_key=admin", { token: account.token }));
    expect(operator.data.every((entry: { actor_member: unknown }) => entry.actor_member === null)).toBe(true);
  });
});

describe("invitations", () => {
  it("mails a one-use link valid 24 h; the token is never in an API answer", async () => {
    const email = uniqueEmail("invitee");
    const response = await memberCall(owner, "POST", "/v1/invitations", { body: { email, role: "viewer" } });
    const invitation = await json(response);
    expect(response.status).toBe(201);
    expect(invitation).toMatchObject({ email, role: "viewer", status: "pending", member_id: null });
    expect(Date.parse(invitation.expires_at) - Date.parse(invitation.created_at)).toBe(24 * HOUR);
    const token = await mailedToken(email);
    expect(JSON.stringify(invitation)).not.toContain(token);
    const accepted = await publicCall("/v1/invitations/accept", { token, name: "Vi", password: PASSWORD });
    expect(accepted.status).toBe(201);
    // Reused: 410, and no second member.
    const reused = await publicCall("/v1/invitations/accept", { token, name: "Vi 2", password: PASSWORD });
    expect(reused.status).toBe(410);
    expect((await json(reused)).code).toBe("link_expired");
    const list = await json(await memberCall(owner, "GET", "/v1/invitations"));
    expect(list.data.find((row: { id: string }) => row.id === invitation.id)).toMatchObject({ status: "accepted" });
  });

  it("an invitation expires after 24 hours", async () => {
    const email = uniqueEmail("late");
    expect((await memberCall(owner, "POST", "/v1/invitations", { body: { email, role: "viewer" } })).status).toBe(201);
    const token = await mailedToken(email);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 24 * HOUR + 1000);
    const late = await publicCall("/v1/invitations/accept", { token, name: "Late", password: PASSWORD });
    expect(late.status).toBe(410);
    expect((await json(late)).code).toBe("link_expired");
  });

  it("a revoked invitation's link stops working; unknown and malformed tokens answer alike", async () => {
    const email = uniqueEmail("revoked");
    const invitation = await json(
      await memberCall(owner, "POST", "/v1/invitations", { body: { email, role: "viewer" } }),
    );
    const token = await mailedToken(email);
    const revoked = await memberCall(owner, "DELETE", `/v1/invitations/${invitation.id}`);
    expect((await json(revoked)).status).toBe("revoked");
    for (const attempt of [token, "A".repeat(43), "short"]) {
      const response = await publicCall("/v1/invitations/accept", { token: attempt, name: "X", password: PASSWORD });
      expect(response.status).toBe(410);
    }
  });

  it("refuses a weak password without consuming the link", async () => {
    const email = uniqueEmail("weak");
    await memberCall(owner, "POST", "/v1/invitations", { body: { email, role: "viewer" } });
    const token = await mailedToken(email);
    const weak = await publicCall("/v1/invitations/accept", { token, name: "W", password: "short" });
    expect(weak.status).toBe(422);
    const ok = await publicCall("/v1/invitations/accept", { token, name: "W", password: PASSWORD });
    expect(ok.status).toBe(201);
  });
});

describe("password reset", () => {
  it("answers the same whether or not the address belongs to a member, and mails only a member", async () => {
    const member = await invited(owner, "viewer");
    const known = await publicCall("/v1/auth/password-reset", { email: member.email });
    const unknown = await publicCall("/v1/auth/password-reset", { email: uniqueEmail("nobody") });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(await known.json()).toEqual(await unknown.json());
    expect((await lastMailTo(member.email)).subject).toBe("Reset your password");
  });

  it("sets a new password once: the link cannot be reused, and every session of the member ends", async () => {
    const member = await invited(owner, "viewer");
    await publicCall("/v1/auth/password-reset", { email: member.email });
    const token = await mailedToken(member.email);
    const done = await publicCall("/v1/auth/password-reset/complete", { token, password: "a brand new password" });
    expect(done.status).toBe(200);
    expect((await memberCall(member, "GET", "/v1/members")).status).toBe(401);
    const reused = await publicCall("/v1/auth/password-reset/complete", { token, password: "yet another one!" });
    expect(reused.status).toBe(410);
    expect((await signIn(member.email, PASSWORD)).status).toBe(401);
    expect((await signIn(member.email, "a brand new password")).status).toBe(201);
  });

  it("a reset link expires after an hour", async () => {
    const member = await invited(owner, "viewer");
    await publicCall("/v1/auth/password-reset", { email: member.email });
    const token = await mailedToken(member.email);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + HOUR + 1000);
    const late = await publicCall("/v1/auth/password-reset/complete", { token, password: "too late password" });
    expect(late.status).toBe(410);
  });
});

describe("member MFA", () => {
  it("a member enrolls TOTP; sign-in then asks for a code, which works once", async () => {
    const member = await invited(owner, "viewer");
    const enrolled = await memberCall(member, "POST", "/v1/auth/mfa", { body: { method: "totp" } });
    expect(enrolled.status).toBe(201);
    expect(enrolled.headers.get("Cache-Control")).toBe("no-store");
    const { secret } = await json(enrolled);
    const verified = await memberCall(member, "POST", "/v1/auth/mfa/verify", {
      body: { code: codeAt(secret, Date.now() - 30_000) },
    });
    expect(verified.status, await verified.clone().text()).toBe(200);
    const without = await signIn(member.email);
    expect(without.status).toBe(403);
    expect((await json(without)).code).toBe("mfa_required");
    const code = codeAt(secret, Date.now());
    const signedWith = await signedIn(member, { mfa_code: code });
    expect(signedWith.cookie).toBeTruthy();
    expect((await signIn(member.email, PASSWORD, { mfa_code: code })).status).toBe(403);
  });
});

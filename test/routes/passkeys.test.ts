import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import { invited, memberCall, ownerOf, publicCall, sessionCookieOf, signIn, type TestMember } from "../helpers/members";
import { codeAt } from "../helpers/mfa";
import {
  type AnswerOptions,
  type CreationOptions,
  type RequestOptions,
  type SoftPasskey,
  softPasskey,
} from "../helpers/passkey-authenticator";

afterEach(() => vi.useRealTimers());

let account: TestAccount;
let owner: TestMember;
beforeAll(async () => {
  account = await createAccount();
  owner = await ownerOf(account);
});

/** The member adds a new software passkey; answers it with the API's passkey resource. */
async function addPasskey(member: TestMember, name = "Laptop") {
  const authenticator = await softPasskey();
  const added = await addWith(member, authenticator, name);
  expect(added.status, await added.clone().text()).toBe(201);
  return { authenticator, passkey: await json(added) };
}

async function addWith(member: TestMember, authenticator: SoftPasskey, name: string, answer: AnswerOptions = {}) {
  const options = await memberCall(member, "POST", "/v1/auth/passkeys/options");
  expect(options.status, await options.clone().text()).toBe(200);
  const credential = await authenticator.register(await json<CreationOptions>(options), answer);
  return memberCall(member, "POST", "/v1/auth/passkeys", { body: { name, credential } });
}

async function signInOptions() {
  const options = await publicCall("/v1/auth/sign-in/passkey/options", undefined);
  expect(options.status).toBe(200);
  return json<RequestOptions>(options);
}

async function passkeySignIn(authenticator: SoftPasskey, answer: AnswerOptions = {}) {
  const credential = await authenticator.signIn(await signInOptions(), answer);
  return publicCall("/v1/auth/sign-in/passkey", { credential });
}

describe("passkeys", () => {
  it("a member adds a passkey and signs in with it alone: a session like a password's, no TOTP code asked", async () => {
    const member = await invited(owner, "developer");
    // TOTP on: a password sign-in now needs a code; the passkey is both factors.
    const { secret } = await json(await memberCall(member, "POST", "/v1/auth/mfa", { body: { method: "totp" } }));
    const on = await memberCall(member, "POST", "/v1/auth/mfa/verify", { body: { code: codeAt(secret, Date.now()) } });
    expect(on.status).toBe(200);
    expect((await json(await signIn(member.email))).code).toBe("mfa_required");

    const { authenticator, passkey } = await addPasskey(member, "MacBook Touch ID");
    expect(passkey).toMatchObject({ name: "MacBook Touch ID", last_used_at: null, transports: ["internal", "hybrid"] });
    expect(passkey.id).toMatch(/^pky_/);
    const listed = await json(await memberCall(member, "GET", "/v1/auth/passkeys"));
    expect(listed.data.map((one: { id: string }) => one.id)).toEqual([passkey.id]);

    const signed = await passkeySignIn(authenticator);
    const body = await json(signed);
    expect(signed.status, JSON.stringify(body)).toBe(201);
    expect(signed.headers.get("Cache-Control")).toBe("no-store");
    expect(body.member.id).toBe(member.id);
    const cookie = sessionCookieOf(signed) as string;
    expect(signed.headers.get("Set-Cookie")).toMatch(/HttpOnly.*Secure|Secure.*HttpOnly/i);
    const session = await memberCall({ cookie, csrf: body.csrf_token }, "GET", "/v1/auth/session");
    expect(session.status).toBe(200);
    expect((await json(session)).member.id).toBe(member.id);
    const after = await json(await memberCall(member, "GET", "/v1/auth/passkeys"));
    expect(after.data[0].last_used_at).not.toBeNull();
  });

  it("a sign-in challenge works once: the same answer sent again is 401 invalid_credentials", async () => {
    const member = await invited(owner, "viewer");
    const { authenticator } = await addPasskey(member);
    const credential = await authenticator.signIn(await signInOptions());
    expect((await publicCall("/v1/auth/sign-in/passkey", { credential })).status).toBe(201);
    const replay = await publicCall("/v1/auth/sign-in/passkey", { credential });
    expect(replay.status).toBe(401);
    expect((await json(replay)).code).toBe("invalid_credentials");
  });

  it("the same answer sent twice at once signs in once", async () => {
    const member = await invited(owner, "viewer");
    const { authenticator } = await addPasskey(member);
    const credential = await authenticator.signIn(await signInOptions());
    const answers = await Promise.all([1, 2, 3].map(() => publicCall("/v1/auth/sign-in/passkey", { credential })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 401, 401]);
  });

  it("an answer made for another site, without the person verified, or with a counter that went back is refused", async () => {
    const member = await invited(owner, "viewer");
    const { authenticator } = await addPasskey(member);
    for (const answer of [{ origin: "https://evil.example" }, { verified: false }]) {
      const refused = await passkeySignIn(authenticator, answer);
      expect(refused.status, JSON.stringify(answer)).toBe(401);
      expect((await json(refused)).code).toBe("invalid_credentials");
    }
    expect((await passkeySignIn(authenticator, { counter: 5 })).status).toBe(201);
    // A cloned authenticator replays an older counter.
    const cloned = await passkeySignIn(authenticator, { counter: 3 });
    expect(cloned.status).toBe(401);
    expect((await passkeySignIn(authenticator, { counter: 6 })).status).toBe(201);
  });

  it("adding is refused for another origin, without user verification, or a challenge of another member's", async () => {
    const member = await invited(owner, "viewer");
    for (const answer of [{ origin: "https://evil.example" }, { verified: false }]) {
      const refused = await addWith(member, await softPasskey(), "Bad", answer);
      expect(refused.status, JSON.stringify(answer)).toBe(400);
      expect((await json(refused)).code).toBe("passkey_rejected");
    }
    // A registration challenge is bound to the member it was made for.
    const other = await invited(owner, "viewer");
    const options = await json<CreationOptions>(await memberCall(member, "POST", "/v1/auth/passkeys/options"));
    const credential = await (await softPasskey()).register(options);
    const stolen = await memberCall(other, "POST", "/v1/auth/passkeys", { body: { name: "Stolen", credential } });
    expect(stolen.status).toBe(400);
    expect((await json(await memberCall(other, "GET", "/v1/auth/passkeys"))).data).toEqual([]);
  });

  it("a challenge older than five minutes is refused", async () => {
    const member = await invited(owner, "viewer");
    const { authenticator } = await addPasskey(member);
    const credential = await authenticator.signIn(await signInOptions());
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 5 * 60_000 + 1000);
    const late = await publicCall("/v1/auth/sign-in/passkey", { credential });
    expect(late.status).toBe(401);
  });

  it("a removed passkey, or a removed member's, signs nobody in; only its member removes it", async () => {
    const member = await invited(owner, "admin");
    const { authenticator, passkey } = await addPasskey(member);
    // Another member (even the owner) and another account see no such passkey.
    const foreign = await memberCall(owner, "DELETE", `/v1/auth/passkeys/${passkey.id}`);
    expect(foreign.status).toBe(404);
    expect((await json(foreign)).code).toBe("passkey_not_found");
    const stranger = await ownerOf(await createAccount());
    expect((await memberCall(stranger, "DELETE", `/v1/auth/passkeys/${passkey.id}`)).status).toBe(404);
    expect((await passkeySignIn(authenticator)).status).toBe(201);

    const removed = await memberCall(member, "DELETE", `/v1/auth/passkeys/${passkey.id}`);
    expect(removed.status).toBe(200);
    expect(await json(removed)).toMatchObject({ id: passkey.id, deleted: true });
    expect((await passkeySignIn(authenticator)).status).toBe(401);
    expect((await memberCall(member, "DELETE", `/v1/auth/passkeys/${passkey.id}`)).status).toBe(404);

    const leaving = await invited(owner, "viewer");
    const kept = await addPasskey(leaving);
    expect((await memberCall(owner, "DELETE", `/v1/members/${leaving.id}`)).status).toBe(200);
    expect((await passkeySignIn(kept.authenticator)).status).toBe(401);
  });

  it("passkeys are a signed-in member's own: an API key is refused, and a change needs the CSRF token", async () => {
    const byKey = await call("GET", "/v1/auth/passkeys", { token: account.token });
    expect(byKey.status).toBe(403);
    expect((await json(byKey)).code).toBe("session_required");
    const member = await invited(owner, "viewer");
    const noCsrf = await memberCall(member, "POST", "/v1/auth/passkeys/options", { csrf: null });
    expect(noCsrf.status).toBe(403);
    expect((await json(noCsrf)).code).toBe("csrf_failed");
    const { passkey } = await addPasskey(member);
    const remove = await memberCall(member, "DELETE", `/v1/auth/passkeys/${passkey.id}`, { csrf: null });
    expect(remove.status).toBe(403);
  });

  it("a member holds at most 10 passkeys (409 passkey_limit), and the audit log names each added and removed", async () => {
    const member = await invited(owner, "viewer");
    const added: string[] = [];
    for (let i = 0; i < 10; i++) added.push((await addPasskey(member, `Key ${i}`)).passkey.id);
    const over = await memberCall(member, "POST", "/v1/auth/passkeys/options");
    expect(over.status).toBe(409);
    expect((await json(over)).code).toBe("passkey_limit");
    // Two additions at once from the ninth: one is added, the other refused.
    expect((await memberCall(member, "DELETE", `/v1/auth/passkeys/${added.pop()}`)).status).toBe(200);
    const pending: { name: string; credential: object }[] = [];
    for (let i = 0; i < 2; i++) {
      const options = await json<CreationOptions>(await memberCall(member, "POST", "/v1/auth/passkeys/options"));
      pending.push({ name: `Race ${i}`, credential: await (await softPasskey()).register(options) });
    }
    const raced = await Promise.all(pending.map((body) => memberCall(member, "POST", "/v1/auth/passkeys", { body })));
    expect(raced.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect((await json(await memberCall(member, "GET", "/v1/auth/passkeys?limit=100"))).data).toHaveLength(10);
    expect((await memberCall(member, "DELETE", `/v1/auth/passkeys/${added[0]}`)).status).toBe(200);
    const audit = await json(await memberCall(owner, "GET", `/v1/audit-events?resource=${member.id}&limit=100`));
    const actions = audit.data.map((entry: { action: string }) => entry.action);
    // Ten, then the race's winner; the refused one left no entry.
    expect(actions.filter((action: string) => action === "member.passkey_added")).toHaveLength(11);
    expect(actions).toContain("member.passkey_removed");
  });

  it("the browser's answer is validated and bounded: a malformed one is 422, never a 500", async () => {
    const bad = await publicCall("/v1/auth/sign-in/passkey", { credential: { id: "x", type: "public-key" } });
    expect(bad.status).toBe(422);
    const huge = await publicCall("/v1/auth/sign-in/passkey", {
      credential: {
        id: "a".repeat(2000),
        rawId: "a",
        type: "public-key",
        clientExtensionResults: {},
        response: { clientDataJSON: "a", authenticatorData: "a", signature: "a" },
      },
    });
    expect(huge.status).toBe(422);
    const garbage = await publicCall("/v1/auth/sign-in/passkey", {
      credential: {
        id: "AAAA",
        rawId: "AAAA",
        type: "public-key",
        clientExtensionResults: {},
        response: { clientDataJSON: "e30", authenticatorData: "AAAA", signature: "AAAA" },
      },
    });
    expect(garbage.status).toBe(401);
    // Another origin's page cannot start a passkey sign-in (as it cannot a password one).
    const crossSite = await publicCall("/v1/auth/sign-in/passkey/options", undefined, {
      Origin: "https://evil.example",
    });
    expect(crossSite.status).toBe(403);
  });
});

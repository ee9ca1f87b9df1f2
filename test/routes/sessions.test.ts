import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createAccount, type TestAccount } from "../helpers/accounts";
import { call, json } from "../helpers/http";
import {
  invited,
  memberCall,
  ownerOf,
  PASSWORD,
  sessionCookieOf,
  signedIn,
  signIn,
  type TestMember,
  uniqueEmail,
} from "../helpers/members";
import { publicOperations } from "../helpers/operations";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
afterEach(() => vi.useRealTimers());

let account: TestAccount;
let owner: TestMember;
beforeAll(async () => {
  account = await createAccount();
  owner = await ownerOf(account);
});

/** A fresh signed-in viewer (its own address, so throttles and sessions of other tests do not touch it). */
const freshMember = (role = "viewer") => invited(owner, role);

describe("the session cookie", () => {
  it("is HttpOnly, Secure, SameSite=Lax, Path=/ and __Host-, an opaque token; the answer is no-store", async () => {
    const member = await freshMember();
    const response = await signIn(member.email);
    expect(response.status).toBe(201);
    const cookie = response.headers.get("Set-Cookie") ?? "";
    expect(cookie).toMatch(/^__Host-session=[0-9A-Za-z]{43};/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Domain=/i);
    expect(cookie).toMatch(/; Max-Age=4320\d/);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const body = await json(response);
    // The cookie's token is never in the body: the session's id is.
    expect(JSON.stringify(body)).not.toContain(sessionCookieOf(response) as string);
    expect(body.session.id).toMatch(/^msn_/);
  });

  it("a cookie-authenticated member uses the same /v1 routes, with its role's scopes", async () => {
    const viewer = await freshMember();
    expect((await memberCall(viewer, "GET", "/v1/users/me")).status).toBe(200);
    expect((await memberCall(viewer, "GET", "/v1/subusers")).status).toBe(200);
    const write = await memberCall(viewer, "PATCH", "/v1/users/me", { body: { company: "Nope" } });
    expect(write.status).toBe(403);
    expect((await json(write)).code).toBe("insufficient_scope");
    // Rate-limit headers come from the member's own guard.
    const read = await memberCall(viewer, "GET", "/v1/users/me");
    expect(read.headers.get("X-RateLimit-Limit")).toBeTruthy();
  });

  it("API keys keep working unchanged, and win when both a key and a cookie are sent", async () => {
    const viewer = await freshMember();
    const response = await call("POST", "/v1/subusers", {
      token: account.token,
      headers: { Cookie: `__Host-session=${viewer.cookie}` },
      body: { label: `key-wins-${Date.now()}`, products: ["residential"] },
    });
    expect(response.status).toBe(201);
  });

  it("session-only operations refuse an API key (403 session_required)", async () => {
    for (const [method, path] of [
      ["GET", "/v1/auth/session"],
      ["GET", "/v1/auth/sessions"],
      ["POST", "/v1/auth/sign-out"],
    ] as const) {
      const response = await call(method, path, { token: account.token });
      expect(response.status, path).toBe(403);
      expect((await json(response)).code).toBe("session_required");
    }
    const current = await memberCall(owner, "GET", "/v1/api-keys/current");
    expect(current.status).toBe(404);
  });
});

describe("session fixation", () => {
  it("a sign-in always opens a new session: a token planted before it is never valid, and a presented one ends", async () => {
    const member = await freshMember();
    const planted = "P".repeat(43);
    const response = await signIn(member.email, PASSWORD, {}, { Cookie: `__Host-session=${planted}` });
    const fresh = sessionCookieOf(response);
    expect(fresh).not.toBe(planted);
    expect((await memberCall({ cookie: planted, csrf: "" }, "GET", "/v1/members")).status).toBe(401);
    // Signing in again from a browser holding a session: that session ends, a new one starts.
    const again = await signIn(member.email, PASSWORD, {}, { Cookie: `__Host-session=${fresh}` });
    const next = sessionCookieOf(again) as string;
    expect(next).not.toBe(fresh);
    expect((await memberCall({ cookie: fresh as string, csrf: "" }, "GET", "/v1/members")).status).toBe(401);
    expect((await memberCall({ cookie: next, csrf: "" }, "GET", "/v1/members")).status).toBe(200);
  });
});

describe("CSRF", () => {
  it("every state-changing operation refuses the cookie without the session's token, with a wrong one, or from another origin", async () => {
    const operations = (await publicOperations()).filter((operation) => operation.method !== "get");
    const document = await json(await call("GET", "/v1/openapi.json"));
    const open = new Set<string>();
    for (const item of Object.values<Record<string, any>>(document.paths)) {
      for (const operation of Object.values<any>(item)) {
        if (Array.isArray(operation?.security) && operation.security.length === 0) open.add(operation.operationId);
      }
    }
    expect(open).toEqual(
      new Set([
        "signIn",
        "createPasskeySignInOptions",
        "signInWithPasskey",
        "acceptInvitation",
        "requestPasswordReset",
        "completePasswordReset",
      ]),
    );
    expect(operations.length).toBeGreaterThan(50);
    const member = await freshMember("admin");
    const wrongs: Array<[string, Record<string, string>, string | null]> = [
      ["no token", {}, null],
      ["a wrong token", {}, "x".repeat(43)],
      ["another session's token", {}, owner.csrf],
      ["another origin", { Origin: "https://evil.example" }, member.csrf],
    ];
    for (const operation of operations) {
      const path = operation.path.replace(/\{product\}/g, "residential").replace(/\{[^}]+\}/g, "xyz_unknown");
      for (const [what, headers, csrf] of wrongs) {
        // Public operations (sign-in, invitations, resets) hold no session; they check the origin alone.
        if (open.has(operation.id) && what !== "another origin") continue;
        const response = await memberCall(member, operation.method.toUpperCase(), path, {
          body: operation.hasBody ? (operation.example ?? {}) : undefined,
          csrf,
          headers,
        });
        expect(response.status, `${operation.id} with ${what}`).toBe(403);
        expect((await json(response)).code, `${operation.id} with ${what}`).toBe("csrf_failed");
      }
    }
    // With its token from its own origin, a change goes through.
    const ok = await memberCall(member, "POST", "/v1/subusers", {
      body: { label: `csrf-ok-${Date.now()}`, products: ["residential"] },
      headers: { Origin: "https://api.test" },
    });
    expect(ok.status).toBe(201);
  });

  it("the CSRF token is shown again to the page holding the cookie (GET /auth/session)", async () => {
    const member = await freshMember();
    const current = await memberCall(member, "GET", "/v1/auth/session");
    expect(current.status).toBe(200);
    expect(current.headers.get("Cache-Control")).toBe("no-store");
    const body = await json(current);
    expect(body).toMatchObject({ session_id: member.sessionId, csrf_token: member.csrf });
    expect(body.member).toMatchObject({ id: member.id, role: "viewer" });
  });
});

describe("timeouts", () => {
  it("a session ends after an idle hour; use within the hour keeps it", async () => {
    const member = await freshMember();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(t0 + 50 * MINUTE);
    expect((await memberCall(member, "GET", "/v1/members")).status).toBe(200);
    vi.setSystemTime(t0 + 100 * MINUTE);
    expect((await memberCall(member, "GET", "/v1/members")).status).toBe(200);
    vi.setSystemTime(t0 + 161 * MINUTE);
    const idle = await memberCall(member, "GET", "/v1/members");
    expect(idle.status).toBe(401);
    expect((await json(idle)).code).toBe("unauthorized");
  });

  it("a session ends 12 hours after sign-in however much it is used", async () => {
    const member = await freshMember();
    const t0 = Date.now();
    vi.useFakeTimers({ toFake: ["Date"] });
    for (let hour = 0.9; hour < 12; hour += 0.9) {
      vi.setSystemTime(t0 + hour * HOUR);
      expect((await memberCall(member, "GET", "/v1/members")).status, `at ${hour} h`).toBe(200);
    }
    vi.setSystemTime(t0 + 12 * HOUR + 1000);
    expect((await memberCall(member, "GET", "/v1/members")).status).toBe(401);
  });
});

describe("sessions of a member", () => {
  it("lists my sessions, ends one, and signs out", async () => {
    const base = await freshMember();
    const other = await signedIn(base);
    const list = await json(await memberCall(base, "GET", "/v1/auth/sessions"));
    const ids = list.data.map((session: { id: string }) => session.id);
    expect(ids).toEqual(expect.arrayContaining([base.sessionId, other.sessionId]));
    expect(list.data.find((session: { id: string }) => session.id === base.sessionId).current).toBe(true);
    // Another member's session answers like an unknown one.
    const foreign = await memberCall(base, "DELETE", `/v1/auth/sessions/${owner.sessionId}`);
    expect(foreign.status).toBe(404);
    const ended = await memberCall(base, "DELETE", `/v1/auth/sessions/${other.sessionId}`);
    expect(ended.status).toBe(200);
    expect((await memberCall(other, "GET", "/v1/members")).status).toBe(401);
    const out = await memberCall(base, "POST", "/v1/auth/sign-out");
    expect(out.status).toBe(200);
    expect(out.headers.get("Set-Cookie")).toMatch(/__Host-session=;.*Max-Age=0/);
    expect((await memberCall(base, "GET", "/v1/members")).status).toBe(401);
  });

  it("sign out everywhere ends every session of the member, the others' too, and is audited", async () => {
    const base = await freshMember();
    const second = await signedIn(base);
    const third = await signedIn(base);
    const response = await memberCall(second, "POST", "/v1/auth/sign-out-everywhere");
    expect(response.status).toBe(200);
    expect((await json(response)).sessions_ended).toBe(3);
    for (const session of [base, second, third]) {
      expect((await memberCall(session, "GET", "/v1/members")).status).toBe(401);
    }
    const audit = await json(
      await call("GET", `/v1/audit-events?action=member.sessions_revoked&resource=${base.id}`, {
        token: account.token,
      }),
    );
    expect(audit.data[0].actor_member).toEqual({ id: base.id, email: base.email });
    // The other members' sessions are untouched.
    expect((await memberCall(owner, "GET", "/v1/members")).status).toBe(200);
  });
});

describe("a member's live tail", () => {
  it("opens with the cookie from the API's own origin only, and closes (4005) when its session ends", async () => {
    const developer = await freshMember("developer");
    const tail = (headers: Record<string, string>) =>
      memberCall(developer, "GET", "/v1/residential/requests/tail", { headers: { Upgrade: "websocket", ...headers } });
    const foreign = await tail({ Origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await json(foreign)).code).toBe("csrf_failed");
    expect((await tail({})).status).toBe(403);
    const opened = await tail({ Origin: "https://api.test" });
    expect(opened.status).toBe(101);
    const socket = opened.webSocket as WebSocket;
    socket.accept();
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
    );
    expect((await memberCall(developer, "POST", "/v1/auth/sign-out")).status).toBe(200);
    const end = await closed;
    expect(end.code).toBe(4005);
    expect(end.reason).toMatch(/^session_ended/);
  });
});

describe("changing a password", () => {
  it("needs the current password; the other sessions end, this one stays", async () => {
    const base = await freshMember();
    const other = await signedIn(base);
    const wrong = await memberCall(base, "POST", "/v1/auth/password", {
      body: { current_password: "not it at all", new_password: "a brand new password" },
    });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).code).toBe("invalid_credentials");
    const changed = await memberCall(base, "POST", "/v1/auth/password", {
      body: { current_password: PASSWORD, new_password: "a brand new password" },
    });
    expect(changed.status).toBe(200);
    expect((await memberCall(base, "GET", "/v1/members")).status).toBe(200);
    expect((await memberCall(other, "GET", "/v1/members")).status).toBe(401);
    expect((await signIn(base.email, PASSWORD)).status).toBe(401);
    expect((await signIn(base.email, "a brand new password")).status).toBe(201);
  });
});

describe("sign-in", () => {
  it("a wrong password and an unknown address answer alike (401 invalid_credentials)", async () => {
    const member = await freshMember();
    const wrong = await signIn(member.email, "not the password at all");
    const unknown = await signIn(uniqueEmail("ghost"), "not the password at all");
    for (const response of [wrong, unknown]) {
      expect(response.status).toBe(401);
      const body = await json(response);
      expect(body.code).toBe("invalid_credentials");
      expect(body.message).toBe("The email or password is not right.");
      expect(response.headers.get("Set-Cookie")).toBeNull();
    }
  });

  it("the address is case-insensitive", async () => {
    const member = await freshMember();
    expect((await signIn(member.email.toUpperCase())).status).toBe(201);
  });

  it("failed sign-ins are throttled per address: 429 with Retry-After, even with the right password", async () => {
    const member = await freshMember();
    // Its sign-in when it joined was the first of its 10 a minute.
    for (let attempt = 0; attempt < 8; attempt++) {
      expect((await signIn(member.email, `wrong password ${attempt}`)).status).toBe(401);
    }
    const limited = await signIn(member.email, "wrong password 10");
    expect(limited.status).toBe(401);
    const blocked = await signIn(member.email);
    expect(blocked.status).toBe(429);
    expect((await json(blocked)).code).toBe("rate_limited");
    expect(Number(blocked.headers.get("Retry-After"))).toBeGreaterThan(0);
    // Another address of the same account is not held back by it.
    expect((await signIn(owner.email)).status).toBe(201);
  });

  it("sign-ins are throttled per account across addresses", async () => {
    const team = await ownerOf(await createAccount());
    const people = await Promise.all(Array.from({ length: 7 }, () => invited(team, "viewer")));
    let refused = 0;
    for (let round = 0; round < 9 && refused === 0; round++) {
      for (const person of people) {
        const response = await signIn(person.email, `spray ${round}`);
        if (response.status === 429) refused++;
        else expect(response.status).toBe(401);
      }
    }
    // 60 a minute per account: the 61st attempt is refused even for an address with attempts left.
    expect(refused).toBeGreaterThan(0);
  }, 60_000);

  it("a browser's other origin may not sign in (login CSRF)", async () => {
    const member = await freshMember();
    const response = await signIn(member.email, PASSWORD, {}, { Origin: "https://evil.example" });
    expect(response.status).toBe(403);
    expect((await json(response)).code).toBe("csrf_failed");
  });

  it("an address of members of several accounts needs the account, told only to who knows its password", async () => {
    const email = uniqueEmail("twin");
    const first = await createAccount();
    const second = await createAccount();
    for (const each of [first, second]) {
      const { admin } = await import("../helpers/http");
      await admin("POST", `/accounts/${each.id}/members`, { email, name: "Twin", password: PASSWORD });
    }
    expect((await signIn(email, "a wrong password")).status).toBe(401);
    const ambiguous = await signIn(email);
    expect(ambiguous.status).toBe(409);
    expect((await json(ambiguous)).code).toBe("account_required");
    const chosen = await signIn(email, PASSWORD, { account: second.id });
    expect(chosen.status).toBe(201);
    expect((await json(chosen)).member.email).toBe(email);
  });
});

import { expect } from "vitest";
import type { TestAccount } from "./accounts";
import { ADMIN_TOKEN, admin, call, json, someAddress } from "./http";

/** A signed-in member: its session cookie's token and its CSRF token. */
export interface TestMember {
  id: string;
  email: string;
  password: string;
  role: string;
  accountId: string;
  cookie: string;
  csrf: string;
  sessionId: string;
}

let counter = 0;
export const PASSWORD = "correct horse battery staple";

export function uniqueEmail(label = "member"): string {
  return `${label}${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/** The session cookie a response sets (its token), or null. */
export function sessionCookieOf(response: Response): string | null {
  const header = response.headers.get("Set-Cookie") ?? "";
  return /__Host-session=([^;]*)/.exec(header)?.[1] || null;
}

/**
 * A call made by a browser signed in as `member`: its cookie, and its CSRF token on changes (unless `csrf` given),
 * from a client address of its own (a refused session counts against its address's window, which the other test
 * files' calls without a key share otherwise).
 */
export function memberCall(
  member: Pick<TestMember, "cookie" | "csrf">,
  method: string,
  path: string,
  options: { body?: unknown; csrf?: string | null; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    Cookie: `__Host-session=${member.cookie}`,
    "CF-Connecting-IP": someAddress(),
    ...options.headers,
  };
  const csrf = options.csrf === undefined ? member.csrf : options.csrf;
  if (method !== "GET" && csrf !== null) headers["X-CSRF-Token"] = csrf;
  return call(method, path, { body: options.body, headers });
}

/**
 * A call of an operation that holds no credential (sign-in, invitations, resets), from a client address of its own:
 * such calls count against their address's window (60 a minute), which a whole test file would otherwise share.
 */
export function publicCall(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return call("POST", path, { body, headers: { "CF-Connecting-IP": someAddress(), ...headers } });
}

export async function signIn(
  email: string,
  password = PASSWORD,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Response> {
  return publicCall("/v1/auth/sign-in", { email, password, ...extra }, headers);
}

/** Signs in and answers the member with its session. */
export async function signedIn(
  base: Omit<TestMember, "cookie" | "csrf" | "sessionId">,
  extra: Record<string, unknown> = {},
): Promise<TestMember> {
  const response = await signIn(base.email, base.password, extra);
  const body = await json(response);
  expect(response.status, JSON.stringify(body)).toBe(201);
  return { ...base, cookie: sessionCookieOf(response) as string, csrf: body.csrf_token, sessionId: body.session.id };
}

/** The account's owner, made by the admin API, signed in. */
export async function ownerOf(account: TestAccount): Promise<TestMember> {
  const email = uniqueEmail("owner");
  const created = await admin("POST", `/accounts/${account.id}/members`, { email, name: "Owner", password: PASSWORD });
  const owner = await json(created);
  expect(created.status, JSON.stringify(owner)).toBe(201);
  return signedIn({ id: owner.id, email, password: PASSWORD, role: "owner", accountId: account.id });
}

/** The newest mail of the outbox to `to`. */
export async function lastMailTo(to: string): Promise<{ subject: string; text: string }> {
  const response = await call("GET", `/internal/dev/outbox?to=${encodeURIComponent(to)}&limit=1`, {
    token: ADMIN_TOKEN,
  });
  const body = await json(response);
  expect(response.status).toBe(200);
  expect(body.data.length, `no mail to ${to}`).toBe(1);
  return body.data[0];
}

/** The token of the newest mailed link to `to` (an invitation's or a reset's). */
export async function mailedToken(to: string): Promise<string> {
  const mail = await lastMailTo(to);
  const token = /token=([0-9A-Za-z]{43})/.exec(mail.text)?.[1];
  expect(token, mail.text).toBeDefined();
  return token as string;
}

/** Invites a person with `role` (as `inviter`), accepts, and signs them in. */
export async function invited(inviter: TestMember, role: string): Promise<TestMember> {
  const email = uniqueEmail(role);
  const invitation = await memberCall(inviter, "POST", "/v1/invitations", { body: { email, role } });
  expect(invitation.status, await invitation.clone().text()).toBe(201);
  const accepted = await publicCall("/v1/invitations/accept", {
    token: await mailedToken(email),
    name: `A ${role}`,
    password: PASSWORD,
  });
  const member = await json(accepted);
  expect(accepted.status, JSON.stringify(member)).toBe(201);
  return signedIn({ id: member.id, email, password: PASSWORD, role, accountId: inviter.accountId });
}

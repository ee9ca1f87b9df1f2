import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { endPresentedSession, type NewSession } from "../domain/members/sessions";
import type { AppEnv } from "../env";
import { now } from "../platform/clock";

/**
 * The session cookie: `__Host-` (so it is `Secure`, `Path=/` and bound to the API's own host: no sibling host can
 * plant one), `HttpOnly` (no script reads it), `SameSite=Lax` (no cross-site request carries it on a change).
 * Its value is an opaque random token, stored hashed; the session's id is shown instead. Named `__Host-session`:
 * hono's helpers take `session` with `prefix: "host"`.
 */
const NAME = "session";
/** The header a change made with the cookie carries the session's CSRF token in. */
export const CSRF_HEADER = "X-CSRF-Token";

export function sessionCookieToken(c: Context): string | undefined {
  return getCookie(c, NAME, "host");
}

export function setSessionCookie(c: Context, token: string, expiresAt: number): void {
  setCookie(c, NAME, token, {
    path: "/",
    secure: true,
    httpOnly: true,
    sameSite: "Lax",
    maxAge: Math.max(0, Math.ceil((expiresAt - now()) / 1000)),
    prefix: "host",
  });
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, NAME, { path: "/", secure: true, httpOnly: true, sameSite: "Lax", prefix: "host" });
}

/** Sets a new session's cookie in place of the one the browser held, which ends: one browser, one session. */
export async function adoptSession(c: Context<AppEnv>, signed: NewSession): Promise<void> {
  const presented = sessionCookieToken(c);
  if (presented !== undefined) await endPresentedSession(c.get("ctx"), presented);
  setSessionCookie(c, signed.token, signed.session.expiresAt);
}

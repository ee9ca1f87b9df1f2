import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { csrfTokenFor, sessionForToken } from "../domain/members/sessions";
import type { AppEnv } from "../env";
import { timingSafeEqual } from "../platform/crypto";
import { ApiError } from "../platform/errors";
import { admitClientAddress, apiKeyAuth } from "./api-key-auth";
import { delegatedCaller } from "./oauth-auth";
import { CSRF_HEADER, sessionCookieToken } from "./session-cookie";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Who calls `/v1`: a program with `Authorization: Bearer <API_KEY>` (which wins when both are sent), or a member's
 * browser with its session cookie. Either way the caller's guard then admits the request and the operation's
 * scope guard decides it: one authorization model. A change made with the cookie must prove it comes from the
 * API's own pages: the session's CSRF token in `X-CSRF-Token` (an HMAC of the cookie's token), and an
 * `Origin`, when the browser sends one, equal to the API's own. Else 403 `csrf_failed`.
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  // A tool call of `/mcp` made through an OAuth grant: its caller was authenticated there.
  const delegated = delegatedCaller(c.req.raw);
  if (delegated) {
    c.set("caller", delegated);
    c.set("livemode", true);
    return next();
  }
  const cookie = c.req.header("Authorization") === undefined ? sessionCookieToken(c) : undefined;
  if (cookie === undefined) return apiKeyAuth(c, next);
  const session = await sessionForToken(c.get("ctx"), cookie);
  if (!session) {
    await admitClientAddress(c);
    throw new ApiError("unauthorized", "The session has ended (signed out, expired or idle): sign in again.");
  }
  if (!SAFE_METHODS.has(c.req.method)) await assertSameSiteChange(c, cookie);
  // A WebSocket (the live tail) opened with the cookie: only from the API's own pages (browsers send `Origin`).
  if (c.req.header("Upgrade")?.toLowerCase() === "websocket") {
    if (c.req.header("Origin") === undefined) throw new ApiError("csrf_failed");
    assertSameOrigin(c);
  }
  c.set("caller", { kind: "session", session });
  c.set("livemode", true);
  await next();
});

/** 403 `csrf_failed` unless the change carries the session's CSRF token and comes from the API's own origin. */
async function assertSameSiteChange(c: Context<AppEnv>, sessionToken: string) {
  assertSameOrigin(c);
  const sent = c.req.header(CSRF_HEADER);
  if (!sent || sent.length > 128 || !(await timingSafeEqual(sent, await csrfTokenFor(c.env, sessionToken)))) {
    throw new ApiError("csrf_failed");
  }
}

/** A browser's `Origin`, when sent, must be the API's own (the origin it was called on, or its public one). */
export function assertSameOrigin(c: Context<AppEnv>): void {
  const origin = c.req.header("Origin");
  if (origin === undefined) return;
  if (origin !== new URL(c.req.url).origin && origin !== c.env.API_ORIGIN) throw new ApiError("csrf_failed");
}

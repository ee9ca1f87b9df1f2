import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";
import type { KeyAccess, KeyArea } from "../vocabulary";
import { ApiError } from "./errors";
import { assertScope } from "./scopes";

/** The request header that carries a second factor for gated actions (declared and validated by them). */
export const MFA_HEADER = "X-MFA-Code";

/** The second factor a gated action was sent with, if any. */
export function mfaCode(c: Context): string | undefined {
  return c.req.header(MFA_HEADER);
}

/** Responses that show a secret once: no cache may keep them (the idempotency store seals them). */
export const noStore = createMiddleware(async (c, next) => {
  await next();
  if (c.res.status < 300) c.header("Cache-Control", "no-store");
});

/**
 * The key's scopes allow the operation (`area:access`), else 403 `insufficient_scope` naming the scope it needed.
 * Runs after authentication, before the handler.
 */
export function requireScope(area: KeyArea, access: KeyAccess) {
  return createMiddleware<AppEnv>(async (c, next) => {
    assertScope(c.get("principal").scopes, area, access);
    await next();
  });
}

/**
 * The test helpers' door: a live key gets 403 `sandbox_key_required` (the helpers do not exist for it), before its
 * scopes are looked at or its request validated. The sandbox's domain verbs check again.
 */
export const requireSandboxKey = createMiddleware<AppEnv>(async (c, next) => {
  if (c.get("principal").livemode) throw new ApiError("sandbox_key_required");
  await next();
});

/**
 * The door of what only the live account has (its people): a sandbox key gets 403 `live_key_required`, after its
 * scopes and before its request is validated.
 */
export const requireLiveKey = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("principal").livemode) throw new ApiError("live_key_required");
  await next();
});

/**
 * The door of what spans the account (its money, totals and settings): a key bound to sub-users gets 403
 * `subuser_binding`, after its scopes and before its request is validated.
 */
export const refuseBoundKeys = createMiddleware<AppEnv>(async (c, next) => {
  if (c.get("principal").subuserIds !== null) {
    throw new ApiError(
      "subuser_binding",
      "This API key is bound to sub-users: it cannot call what spans the account (its money, totals and settings).",
    );
  }
  await next();
});

/** The door of a signed-in member's own operations: anything but a member's session is 403 `session_required`. */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  if (!c.get("principal").member?.sessionId) throw new ApiError("session_required");
  await next();
});

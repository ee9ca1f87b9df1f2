import type { Context } from "hono";
import { createMiddleware } from "hono/factory";

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

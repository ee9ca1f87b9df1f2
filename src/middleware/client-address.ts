import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../env";

/** The address the call came from, as Cloudflare's edge saw it; null when not behind the edge (tests, local). */
export function clientAddress(c: Context): string | null {
  return c.req.header("CF-Connecting-IP") ?? null;
}

/** Admin API calls act as an operator: their changes are written to the audit log with the actor `admin`. */
export const actAsOperator = createMiddleware<AppEnv>(async (c, next) => {
  c.set("ctx", { ...c.get("ctx"), actor: { keyId: null, sourceIp: clientAddress(c), requestId: c.get("requestId") } });
  await next();
});

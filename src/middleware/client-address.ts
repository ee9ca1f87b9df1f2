import type { Context } from "hono";

/** The address the call came from, as Cloudflare's edge saw it; null when not behind the edge (tests, local). */
export function clientAddress(c: Context): string | null {
  return c.req.header("CF-Connecting-IP") ?? null;
}

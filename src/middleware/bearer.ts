import type { Context } from "hono";

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(c: Context): string | null {
  const header = c.req.header("Authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

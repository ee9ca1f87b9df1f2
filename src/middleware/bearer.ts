import type { Context } from "hono";

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(c: Context): string | null {
  const header = c.req.header("Authorization");
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * Where a browser's WebSocket carries its API key, since it cannot send `Authorization`: one of the subprotocols it
 * offers is `bearer.<API_KEY>` (beside `tail`, the one the server answers with).
 */
const BEARER_SUBPROTOCOL = "bearer.";

/**
 * The API key of a request: its `Authorization: Bearer` token or, on a WebSocket upgrade without that header, the
 * `bearer.<token>` subprotocol it offers. Either way the key then meets the same checks.
 */
export function apiKeyToken(c: Context): string | null {
  const header = bearerToken(c);
  if (header || c.req.header("Upgrade")?.toLowerCase() !== "websocket") return header;
  const carried = offeredSubprotocols(c).find((protocol) => protocol.startsWith(BEARER_SUBPROTOCOL));
  return carried ? carried.slice(BEARER_SUBPROTOCOL.length) || null : null;
}

/** The subprotocols a WebSocket upgrade offers (`Sec-WebSocket-Protocol`), in order. */
export function offeredSubprotocols(c: Context): string[] {
  const header = c.req.header("Sec-WebSocket-Protocol");
  return header ? header.split(",").map((protocol) => protocol.trim()) : [];
}

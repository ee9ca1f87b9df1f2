import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { isLiveToken, keyForToken, unauthenticatedGuard } from "../domain/api-keys/api-keys";
import { unauthenticatedLimits } from "../domain/plans";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";
import { apiKeyToken } from "./bearer";
import { clientAddress } from "./client-address";
import { rateLimited, setRateLimitHeaders } from "./rate-limit-headers";

/**
 * Resolves `Authorization: Bearer <API_KEY>` (or a WebSocket's `bearer.<API_KEY>` subprotocol) to a key id
 * (cached); revocation, expiry and a rotated token's grace are the guard's job. A call
 * without a valid key is counted against its client address and answered 401 (or 429 past that limit).
 */
export const apiKeyAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = apiKeyToken(c);
  const key = token ? await keyForToken(c.get("ctx"), token) : null;
  if (!key) {
    await admitClientAddress(c);
    throw new ApiError("unauthorized");
  }
  const livemode = isLiveToken(token as string);
  c.set("caller", { kind: "key", keyId: key.keyId, tokenHash: key.tokenHash, livemode });
  c.set("livemode", livemode);
  await next();
});

/**
 * Counts a call that carries no API key (a failed authentication, a signed download link) against its client
 * address's window: sets `X-RateLimit-*`, and answers 429 past the limit.
 */
export async function admitClientAddress(c: Context<AppEnv>): Promise<void> {
  const client = clientAddress(c) ?? "unknown";
  const rate = await unauthenticatedGuard(c.get("ctx"), client).admitUnauthenticated(unauthenticatedLimits);
  setRateLimitHeaders(c, rate);
  if (!rate.allowed) throw rateLimited(rate);
}

/** The client address's window as a middleware, for routes authorized without an API key. */
export const clientAddressLimit = createMiddleware<AppEnv>(async (c, next) => {
  await admitClientAddress(c);
  await next();
});

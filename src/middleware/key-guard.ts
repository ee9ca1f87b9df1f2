import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { apiKeyGuard } from "../../durable-objects";
import type { AdmitResult, IdempotencyRequest, StoredResponse } from "../../durable-objects/api-key-guard";
import type { WindowVerdict } from "../../durable-objects/rolling-window";
import { database } from "../db/client";
import type { Plan } from "../db/schema";
import { recordLogin } from "../domain/accounts/accounts";
import { syncGuard } from "../domain/api-keys/api-keys";
import { domainContext } from "../domain/context";
import type { AppEnv } from "../env";
import { sha256Hex } from "../platform/crypto";
import { ApiError } from "../platform/errors";

export const IDEMPOTENCY_KEY_MAX_LENGTH = 64;
const MUTATING_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const REPLAYED_HEADERS = ["content-type", "location", "link"];
/** Failures that say nothing was attempted: the key stays free for a corrected request. */
const FORGOTTEN_CODES = new Set(["invalid_request", "invalid_json"]);

/**
 * The per-key guard, in one Durable Object call: revocation, rolling rate-limit windows,
 * and the idempotency claim. After the handler it stores (or releases) the idempotent response.
 */
export const keyGuard = createMiddleware<AppEnv>(async (c, next) => {
  const idempotency = await idempotencyRequest(c);
  const result = await admit(c, idempotency);
  if (result.outcome === "unconfigured" || result.outcome === "revoked") throw new ApiError("unauthorized");
  setRateLimitHeaders(c, result.rate);
  if (result.outcome === "limited") {
    throw new ApiError("rate_limited", undefined, { headers: { "Retry-After": String(result.rate.retryAfter) } });
  }

  const { config } = result;
  c.set("principal", {
    keyId: c.var.keyId,
    accountId: config.accountId,
    plan: config.plan as Plan,
    products: config.products as AppEnv["Variables"]["principal"]["products"],
    accountRevision: result.accountRevision,
  });
  if (result.touchLogin) {
    await recordLogin(domainContext(c.env), config.accountId, c.req.header("CF-Connecting-IP") ?? null);
  }

  const claim = result.idempotency;
  switch (claim.state) {
    case "none":
      return next();
    case "mismatch":
      throw new ApiError("idempotency_key_reused");
    case "in_flight":
      throw new ApiError("idempotency_key_in_use");
    case "replay":
      return replay(c, claim.response);
    case "claimed": {
      const key = (idempotency as IdempotencyRequest).key;
      const guard = apiKeyGuard(c.env, c.var.keyId);
      await next();
      const stored = await toStoredResponse(c);
      if (stored) await guard.complete(key, claim.token, stored);
      else await guard.release(key, claim.token);
    }
  }
});

async function admit(c: Context<AppEnv>, idempotency: IdempotencyRequest | null): Promise<AdmitResult> {
  const guard = apiKeyGuard(c.env, c.var.keyId);
  const result = await guard.admit(idempotency);
  if (result.outcome !== "unconfigured") return result;
  // First use of this key by its guard (or its storage was lost): load it from D1 once.
  const config = await syncGuard(database(c.env.DB), c.env, c.var.keyId);
  return config ? guard.admit(idempotency) : result;
}

async function idempotencyRequest(c: Context<AppEnv>): Promise<IdempotencyRequest | null> {
  if (!MUTATING_METHODS.has(c.req.method)) return null;
  const key = c.req.header("Idempotency-Key");
  if (key === undefined) return null;
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    const message = `Idempotency-Key must be 1-${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`;
    throw new ApiError("invalid_request", message, { details: [{ field: "Idempotency-Key", message }] });
  }
  const url = new URL(c.req.url);
  const body = await c.req.text();
  return { key, fingerprint: await sha256Hex(`${c.req.method} ${url.pathname}${url.search}\n${body}`) };
}

function setRateLimitHeaders(c: Context, rate: WindowVerdict): void {
  c.header("X-RateLimit-Limit", String(rate.limit));
  c.header("X-RateLimit-Remaining", String(rate.remaining));
  c.header("X-RateLimit-Reset", String(rate.reset));
}

function replay(c: Context<AppEnv>, stored: StoredResponse): Response {
  c.set("replayed", true);
  return c.newResponse(stored.body, stored.status as 200, { ...stored.headers, "Idempotent-Replayed": "true" });
}

/** The response to remember for replays, or null when the key must be forgotten. */
async function toStoredResponse(c: Context<AppEnv>): Promise<StoredResponse | null> {
  const res = c.res;
  if (res.status >= 500) return null;
  const body = await res.clone().text();
  if (res.status >= 400 && FORGOTTEN_CODES.has(errorCodeOf(body))) return null;
  const headers: Record<string, string> = { "x-request-id": c.var.requestId };
  for (const name of REPLAYED_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: res.status, headers, body };
}

function errorCodeOf(body: string): string {
  try {
    return (JSON.parse(body) as { code?: string }).code ?? "";
  } catch {
    return "";
  }
}

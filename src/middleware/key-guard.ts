import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { rememberWritten } from "../db/account-cache";
import type { AccountRow, Plan, Product } from "../db/schema";
import { recordLogin } from "../domain/accounts/accounts";
import { keyGuard as guardOf, recordKeyUse } from "../domain/api-keys/api-keys";
import { memberGuard } from "../domain/members/members";
import type { ActiveSession } from "../domain/members/sessions";
import type {
  GuardConfig,
  IdempotencyRequest,
  Settlement,
  StoredResponse,
} from "../durable-objects/api-key-guard/contract";
import type { AppEnv } from "../env";
import { now } from "../platform/clock";
import { seal, sha256Hex, unseal } from "../platform/crypto";
import { ApiError } from "../platform/errors";
import { IDEMPOTENCY_KEY_MAX_LENGTH } from "../platform/route-definitions";
import { grantedScopes, type KeyScopes, type MemberRole } from "../vocabulary";
import { clientAddress } from "./client-address";
import { rateLimited, setRateLimitHeaders } from "./rate-limit-headers";

const MUTATING_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"]);
const REPLAYED_HEADERS = ["content-type", "location", "link", "cache-control"];
/**
 * Failures that say nothing was attempted, which the caller fixes and retries with the same key: a corrected body,
 * an `X-MFA-Code` added (headers are not part of the fingerprint), a key with the scope. The key stays free.
 */
const FORGOTTEN_CODES = new Set(["invalid_request", "invalid_json", "mfa_required", "insufficient_scope"]);

/**
 * The caller's guard (an API key's, or a signed-in member's: one per member, the same object class): one Durable
 * Object call before the handler (revocation, rolling rate-limit windows, the
 * idempotency claim) and at most one after it (`settle`: the response to replay, and the account version the
 * request wrote, whose row is then cached for the key's next request). Responses that show a secret
 * (`Cache-Control: no-store`) are stored sealed.
 */
export const keyGuard = createMiddleware<AppEnv>(async (c, next) => {
  const idempotency = await idempotencyRequest(c);
  const caller = c.get("caller");
  const session = caller.kind === "session" ? caller.session : null;
  const grant = caller.kind === "oauth" ? caller.grant : null;
  const memberId = session?.memberId ?? grant?.memberId ?? null;
  const guardId = memberId ?? (caller as { keyId: string }).keyId;
  const keyId = memberId ? null : guardId;
  const guard = memberId ? memberGuard(c.get("ctx"), guardId) : guardOf(c.get("ctx"), guardId);
  const result = await guard.admit(idempotency);
  if (result.outcome === "unconfigured" || result.outcome === "revoked") throw new ApiError("unauthorized");
  setRateLimitHeaders(c, result.rate);
  if (result.outcome === "limited") throw rateLimited(result.rate);

  const { config } = result;
  const token =
    caller.kind === "key"
      ? acceptedToken(config, caller.tokenHash)
      : grant
        ? { until: null }
        : acceptedSession(config, session);
  const keySettlement = {
    keyId: guardId,
    accountId: config.accountId,
    changedAccount: null as AccountRow | null,
  };
  // A member's role is its guard's (pushed at every change), not the session's (read up to a minute ago).
  const role = (config.role ?? session?.role) as MemberRole;
  const member = session
    ? { id: session.memberId, email: session.email, role, sessionId: session.id, sessionEndsAt: session.expiresAt }
    : grant
      ? {
          id: grant.memberId,
          email: grant.email,
          role,
          sessionId: null,
          sessionEndsAt: null,
          grant: { id: grant.id, clientId: grant.clientId, clientName: grant.clientName },
        }
      : null;
  const actor = {
    keyId,
    member: member && { id: member.id, email: member.email },
    ...(grant ? { client: { id: grant.clientId, name: grant.clientName } } : {}),
    sourceIp: clientAddress(c),
    requestId: c.get("requestId"),
  };
  const roleScopes = (config.scopes ?? null) as KeyScopes | null;
  c.set("ctx", { ...c.get("ctx"), keySettlement, actor });
  c.set("principal", {
    keyId,
    member,
    guardId,
    accountId: config.accountId,
    plan: config.plan as Plan,
    products: config.products as Product[] | null,
    // A grant's scopes, within what the member's role allows now (a demotion narrows them at once).
    scopes: grant ? grantedScopes(grant.scopes, roleScopes) : roleScopes,
    subuserIds: config.subuserIds ?? null,
    keysOf: member ? (role === "developer" ? member.id : null) : (config.keysOf ?? null),
    keyExpiresAt: config.expiresAt ?? null,
    tokenHash: caller.kind === "key" ? caller.tokenHash : (session?.tokenHash ?? grant?.tokenHash ?? ""),
    tokenReplacedUntil: token.until,
    accountRevision: result.accountRevision,
    livemode: c.get("livemode"),
  });
  if (result.touchLogin) {
    await Promise.all([
      recordLogin(c.get("ctx"), config.accountId, actor.sourceIp),
      ...(keyId ? [recordKeyUse(c.get("ctx"), keyId, actor.sourceIp)] : []),
    ]);
  }

  const claim = result.idempotency;
  const settlement: Settlement = {};
  switch (claim.state) {
    case "mismatch":
      throw new ApiError("idempotency_key_reused");
    case "in_flight":
      throw new ApiError("idempotency_key_in_use");
    case "replay":
      return replay(c, claim.response);
    case "none":
      await next();
      break;
    case "claimed":
      await next();
      settlement.claim = {
        key: (idempotency as IdempotencyRequest).key,
        token: claim.token,
        response: await toStoredResponse(c),
      };
  }
  const written = keySettlement.changedAccount;
  if (written) settlement.accountVersion = written.version;
  if (!settlement.claim && !written) return;
  const revision = await guard.settle(settlement);
  if (written) rememberWritten(guardId, revision, written);
});

/**
 * A member's session, as its guard accepts it: one of the member's live sessions (sign-out, sign out everywhere,
 * a revocation or a password reset removes it there before answering), before its absolute end. Else 401.
 */
function acceptedSession(config: GuardConfig, session: ActiveSession | null): { until: null } {
  const accepted = session && config.tokens?.find((token) => token.hash === session.tokenHash);
  if (!accepted || (accepted.until !== null && accepted.until <= now())) {
    throw new ApiError("unauthorized", "The session has ended (signed out, expired or idle): sign in again.");
  }
  return { until: null };
}

/**
 * The token the call used, as the key accepts it (`until`: the end of a rotation's grace, null for the current
 * token). An expired key, or a token a rotation replaced past its grace, answers 401 like a revoked key.
 */
function acceptedToken(config: GuardConfig, tokenHash: string): { until: number | null } {
  const at = now();
  if (config.expiresAt != null && config.expiresAt <= at)
    throw new ApiError("unauthorized", "This API key has expired.");
  if (!config.tokens) return { until: null };
  const token = config.tokens.find((accepted) => accepted.hash === tokenHash);
  if (!token || (token.until !== null && token.until <= at)) {
    throw new ApiError("unauthorized", "This API key's token was replaced by a rotation; use the new token.");
  }
  return token;
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

async function replay(c: Context<AppEnv>, stored: StoredResponse): Promise<Response> {
  c.set("replayed", true);
  const body = stored.sealed ? await unseal(stored.body, c.env.SEALING_KEY) : stored.body;
  return c.newResponse(body, stored.status as 200, { ...stored.headers, "Idempotent-Replayed": "true" });
}

/** The response to remember for replays, or null when the key must be forgotten. */
async function toStoredResponse(c: Context<AppEnv>): Promise<StoredResponse | null> {
  const res = c.res;
  if (res.status >= 500) return null;
  const body = await res.clone().text();
  if (res.status >= 400 && FORGOTTEN_CODES.has(errorCodeOf(body))) return null;
  const headers: Record<string, string> = { "x-request-id": c.get("requestId") };
  for (const name of REPLAYED_HEADERS) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  // A response that shows a secret once is kept only sealed: the retry of a lost answer still gets it.
  if (headers["cache-control"] === "no-store") {
    return { status: res.status, headers, body: await seal(body, c.env.SEALING_KEY), sealed: true };
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

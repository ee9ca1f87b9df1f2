import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { type ApiKeyRow, apiKeys, type Product } from "../../db/schema";
import { HOUR, now, SECOND } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { type KeyScopes, keyAreas, scopeAllows } from "../../vocabulary";
import { currentAccount } from "../accounts/accounts";
import { type AuditAction, commitAudited } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertCallerMfa } from "../members/member-mfa";
import { findSubusers } from "../subusers/subusers";
import { isLiveToken, issueApiKey, type KeyGrant, newToken, revokeApiKey, syncGuard } from "./api-keys";

/** Active keys an account may hold (revoked ones do not count). */
export const MAX_ACTIVE_KEYS = 50;
/** How long a rotated key's previous token keeps working unless the rotation says otherwise. */
export const DEFAULT_ROTATION_GRACE_MS = 24 * HOUR;

export interface KeyChanges {
  name?: string | null;
  products?: Product[] | null;
  scopes?: KeyScopes | null;
  /** The sub-users the key is bound to; null: not bound. */
  subuserIds?: string[] | null;
  expiresAt?: number | null;
}

/** The most sub-users one key may be bound to. */
export const MAX_BOUND_SUBUSERS = 1000;

/**
 * The caller's account's keys (a sandbox key sees the sandbox's; a bound key, the keys bound within its sub-users),
 * newest first; revoked keys are not listed.
 */
export function listKeys(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const page = keysetPage(apiKeys.id, query);
  return ctx.db
    .select()
    .from(apiKeys)
    .where(
      and(eq(apiKeys.accountId, principal.accountId), isNull(apiKeys.revokedAt), keysReached(principal), page.where),
    )
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * A bound key sees the keys bound to some of its own sub-users, no other: another key's binding would name the
 * account's other sub-users.
 */
function keysReached(principal: Principal): SQL | undefined {
  // A developer (or a key a developer made) manages the keys that developer made, no other.
  if (principal.keysOf !== null) return eq(apiKeys.memberId, principal.keysOf);
  if (principal.subuserIds === null) return undefined;
  return sql`${apiKeys.subuserIds} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM json_each(${apiKeys.subuserIds})
    WHERE value NOT IN (SELECT value FROM json_each(${JSON.stringify(principal.subuserIds)})))`;
}

/**
 * One key of the caller's account; another account's, a revoked or an unknown one, or one a bound key does not see,
 * is 404 `api_key_not_found`.
 */
export async function findKey(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  options: { revoked?: boolean } = {},
): Promise<ApiKeyRow> {
  const key = isId("apiKey", id)
    ? await ctx.db
        .select()
        .from(apiKeys)
        .where(
          and(
            eq(apiKeys.id, id),
            eq(apiKeys.accountId, principal.accountId),
            options.revoked ? undefined : isNull(apiKeys.revokedAt),
            keysReached(principal),
          ),
        )
        .get()
    : undefined;
  if (!key) throw new ApiError("api_key_not_found");
  return key;
}

/**
 * A new key of the caller's account (live for a live key, sandbox for a sandbox key), never granting more than the
 * calling key: no product, area, access, lifetime or sub-user beyond its own. MFA-gated when MFA is on.
 */
export async function createKey(
  ctx: DomainContext,
  principal: Principal,
  input: KeyChanges,
  mfaCode: string | undefined,
): Promise<{ key: ApiKeyRow; token: string }> {
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  const grant = grantWith(input, {
    products: principal.products,
    scopes: principal.scopes,
    subuserIds: principal.subuserIds,
    expiresAt: principal.keyExpiresAt,
  });
  await assertBindable(ctx, principal, input.subuserIds);
  assertWithinCaller(principal, grant);
  assertFutureExpiry(grant);
  return issueApiKey(
    ctx,
    principal.accountId,
    // Who made it: the member, or the developer whose key made it (whose keys it then stays among).
    { ...grant, name: input.name ?? null, memberId: principal.member?.id ?? principal.keysOf },
    principal.livemode ? "live" : "test",
    { activeLimit: MAX_ACTIVE_KEYS },
  );
}

/** A grant: the fields the changes give, the others as in `base` (the calling key's, or the key's own). */
function grantWith(changes: KeyChanges, base: KeyGrant): KeyGrant {
  return {
    products: changes.products === undefined ? base.products : changes.products,
    scopes: changes.scopes === undefined ? base.scopes : changes.scopes,
    subuserIds: changes.subuserIds === undefined ? base.subuserIds : bindingOf(changes.subuserIds),
    expiresAt: changes.expiresAt === undefined ? base.expiresAt : changes.expiresAt,
  };
}

/** Renames, rescopes or changes the expiry of a key, within the calling key's own grant; in force at once. */
export async function updateKey(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  changes: KeyChanges,
  mfaCode: string | undefined,
): Promise<ApiKeyRow> {
  const key = await manageableKey(ctx, principal, id);
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  const grant = grantWith(changes, key);
  await assertBindable(ctx, principal, changes.subuserIds);
  assertWithinCaller(principal, grant);
  if (changes.expiresAt !== undefined) assertFutureExpiry(grant);
  const written = { ...grant, ...(changes.name === undefined ? {} : { name: changes.name }) };
  const [updated] = await commitAudited(
    ctx,
    ctx.db
      .update(apiKeys)
      .set(written)
      .where(and(eq(apiKeys.id, key.id), isNull(apiKeys.revokedAt)))
      .returning(),
    { ...keyAudit(key, "api_key.updated"), before: key, after: written },
  );
  if (!updated) throw new ApiError("api_key_not_found");
  await syncGuard(ctx, key.id, { channels: true });
  return updated;
}

/**
 * Revokes a key: every call with it answers 401 once this returns (its guard is told before). Revoking a revoked key
 * tells its guard again, so a retry after a failed push completes the revocation.
 */
export async function deleteKey(ctx: DomainContext, principal: Principal, id: string, mfaCode: string | undefined) {
  const key = await manageableKey(ctx, principal, id, { revoked: true });
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  await revokeApiKey(ctx, key.id);
}

/**
 * A new token for a key; the previous one keeps working for `graceMs` (24 hours unless told; 0 ends it at once),
 * so deployments can move over. A second rotation ends the first one's previous token at once.
 */
export async function rotateKey(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  graceMs: number,
  mfaCode: string | undefined,
): Promise<{ key: ApiKeyRow; token: string }> {
  const key = await manageableKey(ctx, principal, id);
  await assertCallerMfa(ctx, principal, await currentAccount(ctx, principal), mfaCode);
  const { token, tokenHash, tokenHint } = await newToken(isLiveToken(key.tokenHint) ? "live" : "test");
  const written = {
    tokenHash,
    tokenHint,
    previousTokenHash: graceMs > 0 ? key.tokenHash : null,
    previousTokenExpiresAt: graceMs > 0 ? now() + graceMs : null,
  };
  const [rotated] = await commitAudited(
    ctx,
    ctx.db
      .update(apiKeys)
      .set(written)
      .where(and(eq(apiKeys.id, key.id), eq(apiKeys.tokenHash, key.tokenHash), isNull(apiKeys.revokedAt)))
      .returning(),
    { ...keyAudit(key, "api_key.rotated"), before: key, after: written },
  );
  // A rotation that raced another one lost: its caller retries against the key as it is now.
  if (!rotated) throw new ApiError("api_key_not_found", "The key changed while it was being rotated; retry.");
  await syncGuard(ctx, key.id, { channels: true });
  return { key: rotated, token };
}

function keyAudit(key: ApiKeyRow, action: AuditAction) {
  return { action, accountId: key.accountId, resourceId: key.id };
}

/** The grace a rotation asked for, in ms. */
export function rotationGraceMs(seconds: number | undefined): number {
  return seconds === undefined ? DEFAULT_ROTATION_GRACE_MS : seconds * SECOND;
}

/**
 * A key can never grant more than the key that makes or changes it: its products within the caller's, each area's
 * access at most the caller's, no later expiry than the caller's own, and a bound caller's binding a subset of its
 * own (an unbound key reaches every sub-user).
 */
function assertWithinCaller(principal: Principal, grant: KeyGrant): void {
  const refuse = (what: string) => {
    throw new ApiError("insufficient_scope", `A key cannot grant more than the key that makes it: ${what}.`);
  };
  if (principal.products !== null) {
    const outside = (grant.products ?? ["every product"]).filter(
      (product) => !principal.products?.includes(product as Product),
    );
    if (outside.length > 0) refuse(`this key's products do not include ${outside.join(", ")}`);
  }
  for (const area of keyAreas) {
    const access = grant.scopes === null ? "write" : grant.scopes[area];
    if (access && !scopeAllows(principal.scopes, area, access)) refuse(`this key lacks ${area}:${access}`);
  }
  if (principal.keyExpiresAt !== null && (grant.expiresAt === null || grant.expiresAt > principal.keyExpiresAt)) {
    refuse("this key expires, so a key it makes must expire no later");
  }
  const bound = principal.subuserIds;
  if (bound !== null && (grant.subuserIds === null || grant.subuserIds.some((id) => !bound.includes(id)))) {
    refuse("this key is bound to sub-users, so a key it makes must be bound to some of them");
  }
}

/** A binding as stored: each sub-user once, in the order first named. */
function bindingOf(ids: string[] | null): string[] | null {
  return ids === null ? null : [...new Set(ids)];
}

/**
 * The sub-users a key is to be bound to are live sub-users of the account that the calling key manages (its product
 * scope, its own binding): any other id answers like an unknown one, 404 `subuser_not_found`.
 */
async function assertBindable(ctx: DomainContext, principal: Principal, ids: string[] | null | undefined) {
  if (ids) await findSubusers(ctx, principal, ids);
}

function assertFutureExpiry(grant: KeyGrant): void {
  if (grant.expiresAt !== null && grant.expiresAt <= now()) {
    const message = "expires_at: must be in the future.";
    throw new ApiError("invalid_request", message, { details: [{ field: "expires_at", message }] });
  }
}

/**
 * A key the caller may change, rotate or revoke: one that grants no more than the caller's own key (else rotating
 * it would hand the caller a stronger key's token).
 */
async function manageableKey(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  options: { revoked?: boolean } = {},
): Promise<ApiKeyRow> {
  const key = await findKey(ctx, principal, id, options);
  assertWithinCaller(principal, key);
  return key;
}

import { and, eq, gt, inArray, isNull, or, sql } from "drizzle-orm";
import { type ApiKeyRow, accounts, apiKeys, members, type Product } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { ApiKeyGuardClient } from "../../durable-objects/api-key-guard";
import type { GuardConfig } from "../../durable-objects/api-key-guard/contract";
import { now } from "../../platform/clock";
import { randomString, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import type { KeyScopes } from "../../vocabulary";
import { commitAudited } from "../audit/audit-log";
import type { DomainContext } from "../context";
import { effectiveLimits } from "../plans";
import { reviewKeyChannels } from "./key-channels";

/**
 * A key's mode: `live_` keys act on the account, `test_` keys on its sandbox twin (domain/sandbox). The token is
 * the prefix then 64 base62 characters (~381 bits), so its mode is known from the token alone.
 */
export const keyModes = ["live", "test"] as const;
export type KeyMode = (typeof keyModes)[number];
export const API_KEY_PATTERN = /^(live|test)_[0-9A-Za-z]{64}$/;
const TOKEN_HINT_LENGTH = 11;

/** Whether a (well-formed) token is a live key's; test keys are only ever issued on sandbox twins. */
export function isLiveToken(token: string): boolean {
  return token.startsWith("live_");
}

/** The guard of one API key, which loads the key's configuration from D1 on its first use. */
export function keyGuard(ctx: DomainContext, keyId: string): ApiKeyGuardClient {
  return new ApiKeyGuardClient(ctx.env, keyId, () => loadGuardConfig(ctx, keyId));
}

/** The guard that limits calls without a valid key, one per client address. */
export function unauthenticatedGuard(ctx: DomainContext, clientAddress: string): ApiKeyGuardClient {
  return new ApiKeyGuardClient(ctx.env, `unauthenticated:${clientAddress}`);
}

/** What a key may do, beside which account it acts on. */
export interface KeyGrant {
  products: Product[] | null;
  scopes: KeyScopes | null;
  /** The sub-users the key is bound to; null = not bound. */
  subuserIds: string[] | null;
  expiresAt: number | null;
}

/** A new token of a mode: the prefix then 64 base62 characters, its SHA-256 hash and its hint. */
export async function newToken(mode: KeyMode) {
  const token = `${mode}_${randomString(64)}`;
  return { token, tokenHash: await sha256Hex(token), tokenHint: token.slice(0, TOKEN_HINT_LENGTH) };
}

/**
 * A new key; its token is returned once and stored only as a SHA-256 hash. A `test` key must be issued on a
 * sandbox twin (`sandboxTwinOf`), a `live` key on a live account: the caller resolves which.
 */
export async function issueApiKey(
  ctx: DomainContext,
  accountId: string,
  grant: KeyGrant & { name?: string | null; memberId?: string | null },
  mode: KeyMode = "live",
  options: { activeLimit?: number } = {},
): Promise<{ key: ApiKeyRow; token: string }> {
  const { token, tokenHash, tokenHint } = await newToken(mode);
  const key: ApiKeyRow = {
    id: newId("apiKey"),
    accountId,
    tokenHash,
    tokenHint,
    products: grant.products,
    scopes: grant.scopes,
    subuserIds: grant.subuserIds,
    name: grant.name ?? null,
    expiresAt: grant.expiresAt,
    lastUsedAt: null,
    lastUsedIp: null,
    previousTokenHash: null,
    previousTokenExpiresAt: null,
    createdAt: now(),
    revokedAt: null,
    memberId: grant.memberId ?? null,
  };
  const active = sql`(SELECT COUNT(*) FROM ${apiKeys} WHERE ${apiKeys.accountId} = ${accountId} AND ${apiKeys.revokedAt} IS NULL)`;
  // One statement: a concurrent creation cannot slip past the limit between the count and the insert.
  const withinLimit = options.activeLimit ? sql`${active} < ${options.activeLimit}` : sql`1`;
  const insert = insertWhere(ctx.db, apiKeys, key, withinLimit).returning({ id: apiKeys.id });
  const inserted = await commitAudited(ctx, insert, {
    action: "api_key.created",
    accountId,
    resourceId: key.id,
    after: key,
  });
  if (inserted.length === 0 && options.activeLimit) {
    throw new ApiError("api_key_limit", undefined, {
      limit: {
        limit: options.activeLimit,
        current: options.activeLimit,
        raisedBy: "nothing: delete keys you no longer use",
      },
    });
  }
  await syncGuard(ctx, key.id);
  return { key, token };
}

/** The keys of the given accounts (an account and its sandbox twin), newest first. */
export function listApiKeys(ctx: DomainContext, accountIds: string[], query: PageQuery) {
  const page = keysetPage(apiKeys.id, query);
  return ctx.db
    .select()
    .from(apiKeys)
    .where(and(inArray(apiKeys.accountId, accountIds), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

interface CachedKey {
  keyId: string;
  expiresAt: number;
}

// token hash → key id. The mapping never changes (revocation, expiry and a rotated token's grace are enforced by
// the key's guard), so a cached entry can only be stale in one harmless way: pointing at a key that refuses it.
const keyCache = new Map<string, CachedKey>();
const KEY_CACHE_TTL_MS = 10 * 60_000;
const KEY_CACHE_MAX = 10_000;

/**
 * The key behind a bearer token (its current token, or the one a rotation replaced), with the token's hash, or
 * null when the token is malformed or unknown. Whether that token is still accepted is the key's guard's call.
 */
export async function keyForToken(
  ctx: DomainContext,
  token: string,
): Promise<{ keyId: string; tokenHash: string } | null> {
  if (!API_KEY_PATTERN.test(token)) return null;
  const hash = await sha256Hex(token);
  const at = now();
  const cached = keyCache.get(hash);
  if (cached && cached.expiresAt > at) return { keyId: cached.keyId, tokenHash: hash };

  const row = await ctx.db
    .select({ id: apiKeys.id, current: apiKeys.tokenHash, replacedUntil: apiKeys.previousTokenExpiresAt })
    .from(apiKeys)
    .where(
      or(eq(apiKeys.tokenHash, hash), and(eq(apiKeys.previousTokenHash, hash), gt(apiKeys.previousTokenExpiresAt, at))),
    )
    .get();
  if (!row) return null;
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  // A replaced token is remembered no longer than its grace: past it, it is unknown (and costs its key nothing).
  const until = row.current === hash ? at + KEY_CACHE_TTL_MS : Math.min(at + KEY_CACHE_TTL_MS, row.replacedUntil ?? at);
  keyCache.set(hash, { keyId: row.id, expiresAt: until });
  return { keyId: row.id, tokenHash: hash };
}

/** What the key's guard needs to know, read from D1 (the source of truth). */
async function loadGuardConfig(ctx: DomainContext, keyId: string): Promise<GuardConfig | null> {
  const row = await ctx.db
    .select({
      accountId: apiKeys.accountId,
      products: apiKeys.products,
      scopes: apiKeys.scopes,
      subuserIds: apiKeys.subuserIds,
      expiresAt: apiKeys.expiresAt,
      tokenHash: apiKeys.tokenHash,
      previousTokenHash: apiKeys.previousTokenHash,
      previousTokenExpiresAt: apiKeys.previousTokenExpiresAt,
      revokedAt: apiKeys.revokedAt,
      plan: accounts.plan,
      limits: accounts.limits,
      memberId: apiKeys.memberId,
      makerRole: members.role,
    })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .leftJoin(members, eq(members.id, apiKeys.memberId))
    .where(eq(apiKeys.id, keyId))
    .get();
  if (!row) return null;
  return {
    accountId: row.accountId,
    plan: row.plan,
    products: row.products,
    limits: effectiveLimits(row.plan, row.limits).api,
    revoked: row.revokedAt !== null,
    scopes: row.scopes,
    subuserIds: row.subuserIds,
    expiresAt: row.expiresAt,
    keysOf: row.makerRole === "developer" ? row.memberId : null,
    tokens: [
      { hash: row.tokenHash, until: null },
      ...(row.previousTokenHash ? [{ hash: row.previousTokenHash, until: row.previousTokenExpiresAt }] : []),
    ],
  };
}

/**
 * Tells the key's guard its configuration as D1 has it now: every change of a key is in force once this returns.
 * After a change of the key itself (`channels`), the channels it opened hear of it too, once the guard refuses new
 * calls: a live tail its key no longer covers closes before this returns.
 */
export async function syncGuard(ctx: DomainContext, keyId: string, options: { channels?: boolean } = {}) {
  const config = await loadGuardConfig(ctx, keyId);
  if (!config) return;
  await keyGuard(ctx, keyId).configure(config);
  if (options.channels) await reviewKeyChannels(ctx, keyId, config);
}

/** Tells the guards of the keys a member made of the member's change (a developer's keys see only its keys). */
export async function syncMemberKeys(ctx: DomainContext, memberId: string): Promise<void> {
  const keys = await ctx.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.memberId, memberId));
  await Promise.all(keys.map((key) => syncGuard(ctx, key.id)));
}

/** Pushes an account's current plan and limits to the guards of all its keys (revoked ones too). */
export async function syncAccountGuards(ctx: DomainContext, accountId: string): Promise<void> {
  const keys = await ctx.db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.accountId, accountId));
  await Promise.all(keys.map((key) => syncGuard(ctx, key.id)));
}

/** Revokes a key everywhere before answering. Revoking twice is harmless. */
export async function revokeApiKey(ctx: DomainContext, keyId: string): Promise<void> {
  const key = await ctx.db.select().from(apiKeys).where(eq(apiKeys.id, keyId)).get();
  if (!key) throw new ApiError("not_found", "No API key with this id exists.");
  const revocation = { revokedAt: now() };
  await commitAudited(
    ctx,
    ctx.db
      .update(apiKeys)
      .set(revocation)
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt))),
    { action: "api_key.revoked", accountId: key.accountId, resourceId: key.id, before: key, after: revocation },
  );
  // Told even when the key was already revoked: a retry after a failed push completes the revocation.
  await syncGuard(ctx, keyId, { channels: true });
}

/** The key's last use (at most once a minute, when its guard asks, like the account's last login). */
export async function recordKeyUse(ctx: DomainContext, keyId: string, ip: string | null): Promise<void> {
  await ctx.db.update(apiKeys).set({ lastUsedAt: now(), lastUsedIp: ip }).where(eq(apiKeys.id, keyId));
}

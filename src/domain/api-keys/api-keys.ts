import { and, eq, isNull } from "drizzle-orm";
import { apiKeyGuard } from "../../../durable-objects";
import type { GuardConfig } from "../../../durable-objects/api-key-guard";
import type { Database } from "../../db/client";
import { accounts, apiKeys, type Product } from "../../db/schema";
import { now } from "../../platform/clock";
import { randomString, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { newId } from "../../platform/ids";
import { effectiveLimits } from "../plans";

/** `live_` then 64 base62 characters (~381 bits). `test_` is reserved for the future sandbox. */
export const API_KEY_PREFIX = "live_";
const API_KEY_PATTERN = /^live_[0-9A-Za-z]{64}$/;

export interface IssuedApiKey {
  id: string;
  token: string;
  products: Product[] | null;
  created_at: string;
}

export async function issueApiKey(
  db: Database,
  env: Cloudflare.Env,
  accountId: string,
  products: Product[] | null,
): Promise<IssuedApiKey> {
  const token = API_KEY_PREFIX + randomString(64);
  const id = newId("apiKey");
  const createdAt = now();
  await db.insert(apiKeys).values({
    id,
    accountId,
    tokenHash: await sha256Hex(token),
    tokenHint: token.slice(0, API_KEY_PREFIX.length + 6),
    products,
    createdAt,
  });
  await syncGuard(db, env, id);
  return { id, token, products, created_at: new Date(createdAt).toISOString() };
}

interface CachedKey {
  keyId: string;
  expiresAt: number;
}

// token hash → key id. The mapping never changes (revocation is enforced by the key's guard),
// so a cached entry can only be stale in one harmless way: pointing at a revoked key.
const keyCache = new Map<string, CachedKey>();
const KEY_CACHE_TTL_MS = 10 * 60_000;
const KEY_CACHE_MAX = 10_000;

/** The id of the key behind a bearer token, or null when the token is malformed or unknown. */
export async function keyIdForToken(db: Database, token: string): Promise<string | null> {
  if (!API_KEY_PATTERN.test(token)) return null;
  const hash = await sha256Hex(token);
  const at = now();
  const cached = keyCache.get(hash);
  if (cached && cached.expiresAt > at) return cached.keyId;

  const row = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.tokenHash, hash)).get();
  if (!row) return null;
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(hash, { keyId: row.id, expiresAt: at + KEY_CACHE_TTL_MS });
  return row.id;
}

/** What the key's guard needs to know, read from D1 (the source of truth). */
export async function loadGuardConfig(db: Database, keyId: string): Promise<GuardConfig | null> {
  const row = await db
    .select({
      accountId: apiKeys.accountId,
      products: apiKeys.products,
      revokedAt: apiKeys.revokedAt,
      plan: accounts.plan,
      limits: accounts.limits,
    })
    .from(apiKeys)
    .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
    .where(eq(apiKeys.id, keyId))
    .get();
  if (!row) return null;
  return {
    accountId: row.accountId,
    plan: row.plan,
    products: row.products,
    limits: effectiveLimits(row.plan, row.limits).api,
    revoked: row.revokedAt !== null,
  };
}

export async function syncGuard(db: Database, env: Cloudflare.Env, keyId: string): Promise<GuardConfig | null> {
  const config = await loadGuardConfig(db, keyId);
  if (config) await apiKeyGuard(env, keyId).configure(config);
  return config;
}

/** The ids of every key of an account (revoked ones too: their guards still answer). */
export async function accountKeyIds(db: Database, accountId: string): Promise<string[]> {
  const keys = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.accountId, accountId));
  return keys.map((key) => key.id);
}

/** Pushes an account's current plan and limits to the guards of all its keys. */
export async function syncAccountGuards(db: Database, env: Cloudflare.Env, accountId: string): Promise<void> {
  await Promise.all((await accountKeyIds(db, accountId)).map((keyId) => syncGuard(db, env, keyId)));
}

export async function revokeApiKey(db: Database, env: Cloudflare.Env, keyId: string): Promise<void> {
  const revoked = await db
    .update(apiKeys)
    .set({ revokedAt: now() })
    .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  if (revoked.length === 0) {
    const exists = await db.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.id, keyId)).get();
    if (!exists) throw new ApiError("not_found", "No API key with this id exists.");
  }
  await syncGuard(db, env, keyId);
}

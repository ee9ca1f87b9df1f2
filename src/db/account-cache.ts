import { eq } from "drizzle-orm";
import { ApiKeyGuardClient } from "../../durable-objects";
import type { DomainContext } from "../domain/context";
import { now } from "../platform/clock";
import { ApiError } from "../platform/errors";
import type { Statement } from "./guarded-batch";
import { type AccountRow, accounts } from "./schema";

/**
 * Per-isolate cache of account rows, valid only at the revision the key's guard reported for this request.
 * Every batch that writes an account row (`writesAccount`) moves the revision in the guards of all the
 * account's keys before it returns, so a cached row is never served after a write has completed. The TTL is a
 * backstop.
 */
interface Entry {
  revision: string;
  account: AccountRow;
  expiresAt: number;
}

const entries = new Map<string, Entry>();
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/** The account as of `revision` (`keyId|guard revision`), from the cache or from D1. */
export async function accountAtRevision(ctx: DomainContext, accountId: string, revision: string): Promise<AccountRow> {
  return cached(accountId, revision) ?? remember(accountId, revision, await accountQuery(ctx, accountId));
}

/** The same, with the result of `query`: on a cache miss both are read in one D1 batch. */
export async function accountAtRevisionWith<Q extends Statement>(
  ctx: DomainContext,
  accountId: string,
  revision: string,
  query: Q,
): Promise<[AccountRow, Q["_"]["result"]]> {
  const hit = cached(accountId, revision);
  if (hit) return [hit, await query];
  const [rows, result] = await ctx.db.batch([accountQuery(ctx, accountId), query]);
  return [remember(accountId, revision, rows), result];
}

/**
 * Cached reads of these accounts become stale everywhere: the guards of all their keys move their revision
 * (the request's own key when it settles, just before its response is sent).
 */
export async function accountsChanged(ctx: DomainContext, accountIds: string[], keyIds: string[]): Promise<void> {
  for (const accountId of accountIds) entries.delete(accountId);
  const settlement = ctx.keySettlement;
  if (settlement && keyIds.includes(settlement.keyId)) settlement.accountChanged = true;
  const others = keyIds.filter((keyId) => keyId !== settlement?.keyId);
  await Promise.all(others.map((keyId) => new ApiKeyGuardClient(ctx.env, keyId).accountChanged()));
}

function accountQuery(ctx: DomainContext, accountId: string) {
  return ctx.db.select().from(accounts).where(eq(accounts.id, accountId));
}

function cached(accountId: string, revision: string): AccountRow | undefined {
  const entry = entries.get(accountId);
  return entry && entry.revision === revision && entry.expiresAt > now() ? entry.account : undefined;
}

function remember(accountId: string, revision: string, rows: AccountRow[]): AccountRow {
  const account = rows[0];
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  if (entries.size >= MAX_ENTRIES) entries.clear();
  entries.set(accountId, { revision, account, expiresAt: now() + TTL_MS });
  return account;
}

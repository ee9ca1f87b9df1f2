import { eq } from "drizzle-orm";
import { apiKeyGuard } from "../../../durable-objects";
import { type AccountRow, accounts } from "../../db/schema";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { accountKeyIds } from "../api-keys/api-keys";
import type { DomainContext } from "../context";

/**
 * Per-isolate cache of account rows, valid only at the revision the key's guard reported for this request.
 * Every write to an account calls `accountChanged`, which moves the revision in the guards of all the
 * account's keys, so a cached row is never served after a write has completed. The TTL is a backstop.
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
  const cached = entries.get(accountId);
  const at = now();
  if (cached && cached.revision === revision && cached.expiresAt > at) return cached.account;
  const account = await ctx.db.select().from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  if (entries.size >= MAX_ENTRIES) entries.clear();
  entries.set(accountId, { revision, account, expiresAt: at + TTL_MS });
  return account;
}

/** Call after any write to an account row: cached reads of it become stale everywhere. */
export async function accountChanged(ctx: DomainContext, accountId: string): Promise<void> {
  entries.delete(accountId);
  const keyIds = await accountKeyIds(ctx.db, accountId);
  await Promise.all(keyIds.map((keyId) => apiKeyGuard(ctx.env, keyId).accountChanged()));
}

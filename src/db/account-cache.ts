import { eq, sql } from "drizzle-orm";
import type { DomainContext } from "../domain/context";
import { ApiKeyGuardClient } from "../durable-objects/api-key-guard";
import { now } from "../platform/clock";
import { ApiError } from "../platform/errors";
import { type AccountRow, accounts } from "./schema";

/**
 * Per-isolate cache of account rows, valid only at the revision the key's guard reported for the request.
 * A guard's revision is `<epoch>.<version>`: the highest account-row version it has been told about (every
 * write of the row moves `accounts.version`, in commit order). Every batch that writes an account row
 * (`writesAccount`) reports the new version to the guards of all the account's keys before the write is
 * acknowledged, so a cached row is never served after a write has completed. The TTL is a backstop.
 */
interface Entry {
  revision: string;
  account: AccountRow;
  expiresAt: number;
}

const entries = new Map<string, Entry>();
const TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

/** The changes of an account-row write, moving its version. */
export function withNewVersion<T extends object>(changes: T) {
  return { ...changes, version: sql`${accounts.version} + 1` };
}

/** The account as of `revision` (`keyId|guard revision`), from the cache or from D1. */
export async function accountAtRevision(ctx: DomainContext, accountId: string, revision: string): Promise<AccountRow> {
  return cached(accountId, revision) ?? remember(revision, (await accountQuery(ctx, accountId))[0]);
}

/**
 * Accounts a batch wrote, as they are after it, and the keys of those accounts: the guards of the keys learn
 * the new versions (the request's own key when it settles, just before its response is sent).
 */
export async function accountsChanged(
  ctx: DomainContext,
  changed: AccountRow[],
  keys: Array<{ id: string; accountId: string }>,
): Promise<void> {
  const versions = new Map(changed.map((account) => [account.id, account.version]));
  for (const account of changed) entries.delete(account.id);
  const settlement = ctx.keySettlement;
  const own = settlement ? changed.find((account) => account.id === settlement.accountId) : undefined;
  if (settlement && own) settlement.changedAccount = own;
  const others = keys.filter((key) => key.id !== settlement?.keyId);
  await Promise.all(
    others.map((key) => new ApiKeyGuardClient(ctx.env, key.id).accountChanged(versions.get(key.accountId) ?? 0)),
  );
}

/**
 * After the request's own key learned a version it wrote: the row it wrote is what that key reads next, so
 * it is cached at the guard's new revision, unless a later write has meanwhile moved the revision further.
 */
export function rememberWritten(keyId: string, guardRevision: string, account: AccountRow): void {
  if (guardRevision.endsWith(`.${account.version}`)) remember(`${keyId}|${guardRevision}`, account);
}

function accountQuery(ctx: DomainContext, accountId: string) {
  return ctx.db.select().from(accounts).where(eq(accounts.id, accountId));
}

function cached(accountId: string, revision: string): AccountRow | undefined {
  const entry = entries.get(accountId);
  return entry && entry.revision === revision && entry.expiresAt > now() ? entry.account : undefined;
}

function remember(revision: string, account: AccountRow | undefined): AccountRow {
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  if (entries.size >= MAX_ENTRIES) entries.clear();
  entries.set(account.id, { revision, account, expiresAt: now() + TTL_MS });
  return account;
}

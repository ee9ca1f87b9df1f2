import { eq, sql } from "drizzle-orm";
import { now } from "../platform/clock";
import { ApiError } from "../platform/errors";
import type { Database } from "./client";
import { type AccountRow, accounts } from "./schema";

/**
 * Per-isolate cache of account rows, valid only at the revision the key's guard reported for the request.
 * A guard's revision is `<epoch>.<version>`: the highest account-row version it has been told about (every
 * write of the row moves `accounts.version`, in commit order). Every statement that writes an account row
 * (`domain/accounts/account-writes.ts`) reports the new version to the guards of all the account's keys before the write is
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
export async function accountAtRevision(db: Database, accountId: string, revision: string): Promise<AccountRow> {
  return cached(accountId, revision) ?? remember(revision, (await accountQuery(db, accountId))[0]);
}

/** Accounts whose rows a batch wrote: their cached reads end here (other isolates' end with the guards' revision). */
export function forgetAccounts(accountIds: Iterable<string>): void {
  for (const id of accountIds) entries.delete(id);
}

/**
 * After the request's own key learned a version it wrote: the row it wrote is what that key reads next, so
 * it is cached at the guard's new revision, unless a later write has meanwhile moved the revision further.
 */
export function rememberWritten(keyId: string, guardRevision: string, account: AccountRow): void {
  if (guardRevision.endsWith(`.${account.version}`)) remember(`${keyId}|${guardRevision}`, account);
}

function accountQuery(db: Database, accountId: string) {
  return db.select().from(accounts).where(eq(accounts.id, accountId));
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

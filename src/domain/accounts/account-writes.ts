import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import { forgetAccounts, withNewVersion } from "../../db/account-cache";
import type { Database } from "../../db/client";
import { type AccountRow, accounts } from "../../db/schema";
import { ApiKeyGuardClient } from "../../durable-objects/api-key-guard";
import { type AuditAction, auditStatements } from "../audit/audit-log";
import type { DomainContext } from "../context";
import { type Step, Write } from "../unit-of-work";

/**
 * The one way to write an account row (only while `condition` holds, when given). It moves the row's version and
 * reads back, in the same statement, the row as written and the ids of the account's keys; once the batch has
 * committed, the account's cached reads end everywhere: the guards of its keys learn the new version (the
 * request's own key when it settles, just before its response is sent).
 */
export function accountUpdate(
  db: Database,
  accountId: string,
  changes: Partial<Record<keyof typeof accounts.$inferInsert, unknown>>,
  condition?: SQL,
) {
  return new Write(
    db
      .update(accounts)
      .set(withNewVersion(changes as Partial<typeof accounts.$inferInsert>))
      .where(and(eq(accounts.id, accountId), condition))
      .returning({
        ...getTableColumns(accounts),
        // Spelled out: drizzle leaves columns unqualified in RETURNING, and `id` would then name the key's own id.
        // The guards to tell: every key's and every member's (a member's requests have a guard of their own).
        keyIds: sql<string>`(SELECT json_group_array(g.id) FROM (SELECT k.id FROM api_keys k WHERE k.account_id = "accounts"."id"
          UNION ALL SELECT m.id FROM members m WHERE m.account_id = "accounts"."id") g)`,
      }),
    { afterCommit: (ctx, written) => accountsChanged(ctx, written) },
  );
}

/** A change of the account that a key or an operator made: the write and its audit entry. */
export function recordedAccountUpdate(
  ctx: DomainContext,
  account: AccountRow,
  action: AuditAction,
  changes: Partial<Record<keyof typeof accounts.$inferInsert, unknown>>,
): Step[] {
  return [
    accountUpdate(ctx.db, account.id, changes),
    ...auditStatements(ctx, {
      action,
      accountId: account.id,
      resourceId: account.id,
      before: account,
      after: changes,
      ifChanged: true,
    }),
  ];
}

async function accountsChanged(ctx: DomainContext, written: Array<AccountRow & { keyIds: string }>): Promise<void> {
  forgetAccounts(written.map((row) => row.id));
  const settlement = ctx.keySettlement;
  await Promise.all(
    written.flatMap(({ keyIds, ...account }) => {
      if (settlement?.accountId === account.id) settlement.changedAccount = account;
      const others = (JSON.parse(keyIds) as string[]).filter((keyId) => keyId !== settlement?.keyId);
      return others.map((keyId) => new ApiKeyGuardClient(ctx.env, keyId).accountChanged(account.version));
    }),
  );
}

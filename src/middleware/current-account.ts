import type { Context } from "hono";
import type { AccountRow } from "../db/schema";
import { accountAtRevision } from "../domain/accounts/account-cache";
import { domainContext } from "../domain/context";
import type { AppEnv } from "../env";

/** The caller's account, read at the revision its key's guard reported for this request (cached per isolate). */
export function currentAccount(c: Context<AppEnv>): Promise<AccountRow> {
  const { accountId, keyId, accountRevision } = c.var.principal;
  return accountAtRevision(domainContext(c.env), accountId, `${keyId}|${accountRevision}`);
}

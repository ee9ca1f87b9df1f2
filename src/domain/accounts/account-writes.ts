import { eq } from "drizzle-orm";
import { withNewVersion } from "../../db/account-cache";
import { writesAccount } from "../../db/guarded-batch";
import { accounts } from "../../db/schema";
import type { DomainContext } from "../context";

/** An update of the account row, marked so the batch that runs it invalidates the account's cached reads. */
export function accountUpdate(ctx: DomainContext, accountId: string, changes: Partial<typeof accounts.$inferInsert>) {
  return writesAccount(
    ctx.db.update(accounts).set(withNewVersion(changes)).where(eq(accounts.id, accountId)),
    accountId,
  );
}

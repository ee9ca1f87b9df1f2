import { and, eq, type SQL } from "drizzle-orm";
import { withNewVersion } from "../../db/account-cache";
import { accounts } from "../../db/schema";
import type { DomainContext } from "../context";
import { Write } from "../unit-of-work";

/**
 * An update of the account row (only while `condition` holds, when given): moves its version, so the unit of work
 * that runs it ends the account's cached reads.
 */
export function accountUpdate(
  ctx: DomainContext,
  accountId: string,
  changes: Partial<typeof accounts.$inferInsert>,
  condition?: SQL,
) {
  return new Write(
    ctx.db
      .update(accounts)
      .set(withNewVersion(changes))
      .where(and(eq(accounts.id, accountId), condition)),
    { changesAccount: accountId },
  );
}

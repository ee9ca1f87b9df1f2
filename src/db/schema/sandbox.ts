import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * The sandbox twin of a live account: a separate account row, created with the account's first `test_` key.
 * Test keys act on the twin, so every `account_id` filter keeps sandbox data apart from live data.
 */
export const sandboxAccounts = sqliteTable("sandbox_accounts", {
  liveAccountId: text("live_account_id")
    .primaryKey()
    .references(() => accounts.id),
  sandboxAccountId: text("sandbox_account_id")
    .notNull()
    .unique()
    .references(() => accounts.id),
  createdAt: integer("created_at").notNull(),
});

export type SandboxAccountRow = typeof sandboxAccounts.$inferSelect;

import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Accounts that may have a live tail open (`GET /v1/{product}/requests/tail`): the usage route sends sampled records
 * to the `RequestTail` of these accounts alone, reading this list at most once a second per isolate. A tail's opening
 * writes its account's row; the first delivery that finds no tail open deletes it, unless a tail opened since.
 */
export const requestTails = sqliteTable("request_tails", {
  accountId: text("account_id").primaryKey(),
  /** When a tail of the account last opened (ms). */
  openedAt: integer("opened_at").notNull(),
});

import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * Proxy test runs (`POST /v1/tools/proxy-test`), kept 24 hours so runs can be compared, then deleted by the cron.
 * The password is never stored: `result` holds the username, the parsed segments and what the gateway answered.
 */
export const proxyTests = sqliteTable(
  "proxy_tests",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    /** The presented result (resources/proxy-test.ts) as JSON: a run never changes. */
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("proxy_tests_account").on(t.accountId, t.id), index("proxy_tests_created").on(t.createdAt)],
);

export type ProxyTestRow = typeof proxyTests.$inferSelect;

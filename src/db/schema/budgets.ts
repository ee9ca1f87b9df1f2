import { sql } from "drizzle-orm";
import { check, index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { accounts } from "./accounts";

/**
 * An account's monthly spend budget (at most one): the month's charges are read from the ledger, so the budget
 * row holds only the settings. `hard_stop` refuses a charge that would take the month's spend past `amount_minor`.
 */
export const spendBudgets = sqliteTable(
  "spend_budgets",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id),
    amountMinor: integer("amount_minor").notNull(),
    /** Percentages of the amount, ascending, each raising one `budget.threshold` event a month. */
    thresholds: text("thresholds", { mode: "json" }).$type<number[]>().notNull(),
    hardStop: integer("hard_stop", { mode: "boolean" }).notNull().default(false),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [check("spend_budgets_amount_positive", sql`${t.amountMinor} > 0`)],
);

export type SpendBudgetRow = typeof spendBudgets.$inferSelect;

/**
 * Whether an account's balance covers what the next 7 days need (`balance.low`): the usage forecast's share of
 * that need, refreshed by the cron, and whether the current crossing was reported. `crossings` moves each time the
 * balance is back above the need, so the next fall is a new event.
 */
export const balanceWatches = sqliteTable(
  "balance_watches",
  {
    accountId: text("account_id")
      .primaryKey()
      .references(() => accounts.id),
    forecastNeedMinor: integer("forecast_need_minor").notNull().default(0),
    /** When the cron last refreshed the forecast's share and checked the balance: it takes the stalest first. */
    forecastAt: integer("forecast_at").notNull().default(0),
    low: integer("low", { mode: "boolean" }).notNull().default(false),
    crossings: integer("crossings").notNull().default(0),
  },
  (t) => [index("balance_watches_stalest").on(t.forecastAt)],
);

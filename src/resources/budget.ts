import { z } from "@hono/zod-openapi";
import { type BudgetStanding, DEFAULT_BUDGET_THRESHOLDS, thresholdsReached } from "../domain/billing/budget";
import { MAX_BUDGET_THRESHOLDS } from "../domain/billing/spend";
import { toIso } from "../platform/clock";
import { integer, list, timestamp, token, usd, usdAmount } from "../platform/fields";
import { fromMinor } from "../platform/money";

/** The largest budget: ten million USD a month. */
const MAX_BUDGET_USD = 10_000_000;

const thresholdPercent = () => integer(1, 1000).openapi({ description: "A percentage of the amount.", example: 80 });

export const budgetSchema = z
  .object({
    currency: z.enum(["USD"]),
    amount_usd: usdAmount().nullable().openapi({ description: "The monthly budget; null when none is set." }),
    thresholds_percent: list(thresholdPercent(), MAX_BUDGET_THRESHOLDS),
    hard_stop: z.boolean().openapi({
      description: "Charges that would take the month's spend past the amount are refused (409 `budget_exceeded`).",
    }),
    month: token(/^\d{4}-\d{2}$/, 7).openapi({
      description: "The current month (UTC calendar month).",
      example: "2026-11",
    }),
    spent_this_month_usd: usdAmount().openapi({
      description:
        "What the month's charges came to: orders, subscriptions and their renewals and upgrades, ISP renewals and " +
        "paid IP replacements, counted as they are charged.",
    }),
    remaining_usd: usdAmount()
      .nullable()
      .openapi({ description: "Amount − spend, at least 0; null without a budget." }),
    thresholds_reached: list(thresholdPercent(), MAX_BUDGET_THRESHOLDS),
    updated_at: timestamp().nullable(),
  })
  .openapi("Budget");

export const budgetInputSchema = z
  .strictObject({
    amount_usd: usd(MAX_BUDGET_USD).openapi({ example: 500 }),
    thresholds_percent: list(thresholdPercent(), MAX_BUDGET_THRESHOLDS)
      .refine((values) => new Set(values).size === values.length, "must not repeat a percentage")
      .default(DEFAULT_BUDGET_THRESHOLDS)
      .openapi({ description: "Each raises one `budget.threshold` event a month. Default [50, 80, 100]." }),
    hard_stop: z.boolean().default(false),
  })
  .openapi("BudgetInput", { example: { amount_usd: 500, thresholds_percent: [50, 80, 100], hard_stop: true } });

export function presentBudget(standing: BudgetStanding): z.infer<typeof budgetSchema> {
  const { budget, spentMinor, month } = standing;
  return {
    currency: "USD",
    amount_usd: budget ? fromMinor(budget.amountMinor) : null,
    thresholds_percent: budget?.thresholds ?? [],
    hard_stop: budget?.hardStop ?? false,
    month: month.month,
    spent_this_month_usd: fromMinor(spentMinor),
    remaining_usd: budget ? fromMinor(Math.max(0, budget.amountMinor - spentMinor)) : null,
    thresholds_reached: budget ? thresholdsReached(spentMinor, budget.amountMinor, budget.thresholds) : [],
    updated_at: budget ? toIso(budget.updatedAt) : null,
  };
}

import type { RouteHandler } from "@hono/zod-openapi";
import { setBudget } from "../../domain/billing/budget";
import type { AppEnv } from "../../env";
import { toMinor } from "../../platform/money";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { budgetInputSchema, budgetSchema, presentBudget } from "../../resources/budget";

export const route = apiRoute({
  operationId: "setBudget",
  method: "put",
  path: "/budget",
  tags: ["Orders"],
  summary: "Set the monthly budget",
  description:
    "Sets (or replaces) the monthly spend budget. Each threshold raises one `budget.threshold` event a month when " +
    "the spend reaches it (those already reached under a new amount, at once). With `hard_stop`, an order, a " +
    "subscription charge or a renewal that would take the month's spend past the amount is refused with 409 " +
    "`budget_exceeded` (renewals go `past_due`, as when the balance cannot pay). Needs `X-MFA-Code` when MFA is " +
    "enabled, and a key without a product scope.",
  request: { body: jsonBody(budgetInputSchema) },
  mfa: true,
  errors: ["subuser_scope_mismatch"],
  responses: { 200: jsonContent(budgetSchema, "The budget as set.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const standing = await setBudget(
    c.get("ctx"),
    c.get("principal"),
    {
      amountMinor: toMinor(input.amount_usd),
      thresholds: [...input.thresholds_percent].sort((a, b) => a - b),
      hardStop: input.hard_stop,
    },
    mfaCode(c),
  );
  return c.json(presentBudget(standing), 200);
};

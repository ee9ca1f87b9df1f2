import type { RouteHandler } from "@hono/zod-openapi";
import { deleteBudget, getBudget } from "../../domain/billing/budget";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import { budgetSchema, presentBudget } from "../../resources/budget";

export const route = apiRoute({
  operationId: "deleteBudget",
  method: "delete",
  path: "/budget",
  tags: ["Orders"],
  summary: "Remove the monthly budget",
  description:
    "Removes the budget, its thresholds and its hard stop; the month's spend is still shown. Removing when none is " +
    "set answers the same. Needs `X-MFA-Code` when MFA is enabled, and a key without a product scope.",
  mfa: true,
  errors: ["subuser_scope_mismatch"],
  responses: { 200: jsonContent(budgetSchema, "The account without a budget.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await deleteBudget(c.get("ctx"), c.get("principal"), mfaCode(c));
  return c.json(presentBudget(await getBudget(c.get("ctx"), c.get("principal"))), 200);
};

import type { RouteHandler } from "@hono/zod-openapi";
import { getBudget } from "../../domain/billing/budget";
import type { AppEnv } from "../../env";
import { apiRoute, jsonContent } from "../../platform/route-definitions";
import { budgetSchema, presentBudget } from "../../resources/budget";

export const route = apiRoute({
  operationId: "getBudget",
  method: "get",
  path: "/budget",
  tags: ["Orders"],
  summary: "Get the monthly budget",
  description:
    "The account's monthly spend budget and the month's spend so far (UTC calendar month), with the thresholds " +
    "reached. Without a budget, `amount_usd` is null and the spend is still shown. Needs a key without a product " +
    "scope: the spend covers every product.",
  errors: ["subuser_scope_mismatch"],
  responses: { 200: jsonContent(budgetSchema, "The budget.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  return c.json(presentBudget(await getBudget(c.get("ctx"), c.get("principal"))), 200);
};

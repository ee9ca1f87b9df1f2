import { type RouteHandler, z } from "@hono/zod-openapi";
import { creditAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { usd } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { adminAccountSchema, presentAdminAccount } from "../../resources/admin";
import { accountParams, MAX_ADMIN_USD, tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminCreditAccount",
    method: "post",
    path: "/accounts/{id}/credits",
    tags,
    summary: "Credit the prepaid balance",
    description: "Adds money to the balance, recorded in the ledger.",
    request: {
      params: accountParams,
      body: jsonBody(
        z.strictObject({ amount_usd: usd(MAX_ADMIN_USD) }).openapi("AdminCredit", { example: { amount_usd: 100 } }),
      ),
    },
    errors: ["not_found"],
    responses: { 200: jsonContent(adminAccountSchema, "The account with its new balance.") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const amount = toMinor(c.req.valid("json").amount_usd);
  const account = await creditAccount(c.get("ctx"), c.req.valid("param").id, amount, "admin_credit");
  return c.json(presentAdminAccount(account), 200);
};

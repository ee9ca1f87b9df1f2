import { type RouteHandler, z } from "@hono/zod-openapi";
import { kycStatuses, plans } from "../../db/schema";
import { createAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { email, text, usd } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { adminAccountSchema, presentAdminAccount } from "../../resources/admin";
import { MAX_ADMIN_USD, tags } from "./shared";

export const route = internalRoute(
  {
    operationId: "adminCreateAccount",
    method: "post",
    path: "/accounts",
    tags,
    summary: "Create an account",
    description: "An account with an optional opening balance (recorded in the ledger as an initial credit).",
    request: {
      body: jsonBody(
        z
          .strictObject({
            email: email(),
            plan: z.enum(plans).default("trial"),
            company: text(200, 1).trim().nullable().default(null),
            kyc_status: z.enum(kycStatuses).default("not-submitted"),
            balance_usd: usd(MAX_ADMIN_USD, 0).default(0),
          })
          .openapi("AdminAccountCreate", { example: { email: "ops@acme.example", plan: "pro", balance_usd: 500 } }),
      ),
    },
    errors: ["email_in_use"],
    responses: { 201: jsonContent(adminAccountSchema, "The new account.") },
  },
  "AdminToken",
);

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { kyc_status, balance_usd, ...input } = c.req.valid("json");
  const account = await createAccount(c.get("ctx"), {
    ...input,
    kycStatus: kyc_status,
    balanceMinor: toMinor(balance_usd),
  });
  return c.json(presentAdminAccount(account), 201);
};

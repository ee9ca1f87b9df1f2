import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { kycStatuses, plans } from "../../db/schema";
import {
  adminUpdateAccount,
  createAccount,
  creditAccount,
  findAccount,
  listAccounts,
} from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { email, idParam, text, usd } from "../../platform/fields";
import { toMinor } from "../../platform/money";
import { pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { adminAccountSchema, limitOverridesSchema, presentAdminAccount, toLimitOverrides } from "../../resources/admin";

const tags = ["Admin"];
const accountParams = z.object({ id: idParam("account").openapi({ param: { name: "id", in: "path" } }) });
const MAX_CREDIT_USD = 10_000_000;

const createAccountRoute = internalRoute(
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
            balance_usd: usd(MAX_CREDIT_USD, 0).default(0),
          })
          .openapi("AdminAccountCreate", { example: { email: "ops@acme.example", plan: "pro", balance_usd: 500 } }),
      ),
    },
    errors: ["email_in_use"],
    responses: { 201: jsonContent(adminAccountSchema, "The new account.") },
  },
  "AdminToken",
);

const listAccountsRoute = internalRoute(
  {
    operationId: "adminListAccounts",
    method: "get",
    path: "/accounts",
    tags,
    summary: "List accounts",
    description: "Newest first; `email` finds one account.",
    request: { query: paginationQuery.extend({ email: email().optional() }) },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(pageSchema(adminAccountSchema), "A page of accounts, newest first.") },
  },
  "AdminToken",
);

const getAccountRoute = internalRoute(
  {
    operationId: "adminGetAccount",
    method: "get",
    path: "/accounts/{id}",
    tags,
    summary: "Get an account",
    description: "The account with its risk-review flag and limit overrides.",
    request: { params: accountParams },
    errors: ["invalid_request", "not_found"],
    responses: { 200: jsonContent(adminAccountSchema, "The account.") },
  },
  "AdminToken",
);

const updateAccountRoute = internalRoute(
  {
    operationId: "adminUpdateAccount",
    method: "patch",
    path: "/accounts/{id}",
    tags,
    summary: "Update an account",
    description:
      "Plan, KYC, login email, risk review and per-account limit overrides. Takes effect on the next API call.",
    request: {
      params: accountParams,
      body: jsonBody(
        z
          .strictObject({
            plan: z.enum(plans).optional(),
            kyc_status: z.enum(kycStatuses).optional(),
            email: email().optional(),
            risk_review: z.boolean().optional(),
            company: text(200, 1).trim().nullable().optional(),
            limits: limitOverridesSchema.nullable().optional(),
          })
          .openapi("AdminAccountUpdate", { example: { plan: "enterprise", limits: { api_burst_per_min: 5000 } } }),
      ),
    },
    errors: ["not_found", "email_in_use"],
    responses: { 200: jsonContent(adminAccountSchema, "The updated account.") },
  },
  "AdminToken",
);

const creditRoute = internalRoute(
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
        z.strictObject({ amount_usd: usd(MAX_CREDIT_USD) }).openapi("AdminCredit", { example: { amount_usd: 100 } }),
      ),
    },
    errors: ["not_found"],
    responses: { 200: jsonContent(adminAccountSchema, "The account with its new balance.") },
  },
  "AdminToken",
);

export function adminAccountRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createAccountRoute, async (c) => {
    const { kyc_status, balance_usd, ...input } = c.req.valid("json");
    const account = await createAccount(c.var.ctx, {
      ...input,
      kycStatus: kyc_status,
      balanceMinor: toMinor(balance_usd),
    });
    return c.json(presentAdminAccount(account), 201);
  });

  app.openapi(listAccountsRoute, async (c) => {
    const query = c.req.valid("query");
    return c.json(toPage(c, await listAccounts(c.var.ctx, query), query.limit, presentAdminAccount), 200);
  });

  app.openapi(getAccountRoute, async (c) => {
    return c.json(presentAdminAccount(await findAccount(c.var.ctx, c.req.valid("param").id)), 200);
  });

  app.openapi(updateAccountRoute, async (c) => {
    const { kyc_status, risk_review, limits, ...patch } = c.req.valid("json");
    const account = await adminUpdateAccount(c.var.ctx, c.req.valid("param").id, {
      ...patch,
      kycStatus: kyc_status,
      riskReview: risk_review,
      limits: limits ? toLimitOverrides(limits) : limits,
    });
    return c.json(presentAdminAccount(account), 200);
  });

  app.openapi(creditRoute, async (c) => {
    const amount = toMinor(c.req.valid("json").amount_usd);
    const account = await creditAccount(c.var.ctx, c.req.valid("param").id, amount, "admin_credit");
    return c.json(presentAdminAccount(account), 200);
  });
}

import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import { database } from "../../db/client";
import { accounts, kycStatuses, plans } from "../../db/schema";
import { adminUpdateAccount, createAccount, creditAccount, findAccount } from "../../domain/accounts/accounts";
import { domainContext } from "../../domain/context";
import type { AppEnv } from "../../env";
import { hasCentPrecision, toMinor } from "../../platform/money";
import { internalRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { keysetPage, pageSchema, paginationQuery, toPage } from "../../platform/pagination";
import { adminAccountSchema, limitOverridesSchema, presentAdminAccount } from "../../schemas/admin";

const tags = ["Internal: admin"];
const accountParams = z.object({ id: z.string().openapi({ example: "usr_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }) });
const usd = z.number().positive().max(10_000_000).refine(hasCentPrecision, "must have at most 2 decimals");

const createAccountRoute = internalRoute(
  {
    method: "post",
    path: "/accounts",
    tags,
    summary: "Create an account",
    request: {
      body: jsonBody(
        z
          .strictObject({
            email: z.email().max(254),
            plan: z.enum(plans).default("trial"),
            company: z.string().trim().min(1).max(200).nullable().default(null),
            kyc_status: z.enum(kycStatuses).default("not-submitted"),
            balance_usd: z
              .number()
              .min(0)
              .max(10_000_000)
              .refine(hasCentPrecision, "must have at most 2 decimals")
              .default(0),
          })
          .openapi("AdminAccountCreate", { example: { email: "ops@acme.example", plan: "pro", balance_usd: 500 } }),
      ),
    },
    errors: ["invalid_request", "email_in_use"],
    responses: { 201: jsonContent(adminAccountSchema, "The new account.") },
  },
  "AdminToken",
);

const listAccountsRoute = internalRoute(
  {
    method: "get",
    path: "/accounts",
    tags,
    summary: "List accounts",
    request: { query: paginationQuery.extend({ email: z.email().optional() }) },
    errors: ["invalid_request"],
    responses: { 200: jsonContent(pageSchema(adminAccountSchema), "A page of accounts, newest first.") },
  },
  "AdminToken",
);

const getAccountRoute = internalRoute(
  {
    method: "get",
    path: "/accounts/{id}",
    tags,
    summary: "Get an account",
    request: { params: accountParams },
    errors: ["not_found"],
    responses: { 200: jsonContent(adminAccountSchema, "The account.") },
  },
  "AdminToken",
);

const updateAccountRoute = internalRoute(
  {
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
            email: z.email().max(254).optional(),
            risk_review: z.boolean().optional(),
            company: z.string().trim().min(1).max(200).nullable().optional(),
            limits: limitOverridesSchema.nullable().optional(),
          })
          .openapi("AdminAccountUpdate", { example: { plan: "enterprise", limits: { api_burst_per_min: 5000 } } }),
      ),
    },
    errors: ["invalid_request", "not_found", "email_in_use"],
    responses: { 200: jsonContent(adminAccountSchema, "The updated account.") },
  },
  "AdminToken",
);

const creditRoute = internalRoute(
  {
    method: "post",
    path: "/accounts/{id}/credits",
    tags,
    summary: "Credit the prepaid balance",
    request: {
      params: accountParams,
      body: jsonBody(z.strictObject({ amount_usd: usd }).openapi("AdminCredit", { example: { amount_usd: 100 } })),
    },
    errors: ["invalid_request", "not_found"],
    responses: { 200: jsonContent(adminAccountSchema, "The account with its new balance.") },
  },
  "AdminToken",
);

export function adminAccountRoutes(app: OpenAPIHono<AppEnv>): void {
  app.openapi(createAccountRoute, async (c) => {
    const input = c.req.valid("json");
    const account = await createAccount(database(c.env.DB), {
      email: input.email,
      plan: input.plan,
      company: input.company,
      kycStatus: input.kyc_status,
      balanceMinor: toMinor(input.balance_usd),
    });
    return c.json(presentAdminAccount(account), 201);
  });

  app.openapi(listAccountsRoute, async (c) => {
    const query = c.req.valid("query");
    const page = keysetPage(accounts.id, query);
    const rows = await database(c.env.DB)
      .select()
      .from(accounts)
      .where(and(page.where, query.email ? eq(accounts.email, query.email) : undefined))
      .orderBy(page.orderBy)
      .limit(page.limit);
    return c.json(toPage(c, rows, query.limit, presentAdminAccount), 200);
  });

  app.openapi(getAccountRoute, async (c) => {
    return c.json(presentAdminAccount(await findAccount(database(c.env.DB), c.req.valid("param").id)), 200);
  });

  app.openapi(updateAccountRoute, async (c) => {
    const account = await adminUpdateAccount(domainContext(c.env), c.req.valid("param").id, c.req.valid("json"));
    return c.json(presentAdminAccount(account), 200);
  });

  app.openapi(creditRoute, async (c) => {
    const amount = toMinor(c.req.valid("json").amount_usd);
    const account = await creditAccount(domainContext(c.env), c.req.valid("param").id, amount, "admin_credit");
    return c.json(presentAdminAccount(account), 200);
  });
}

import { type RouteHandler, z } from "@hono/zod-openapi";
import { kycStatuses, plans } from "../../db/schema";
import { adminUpdateAccount } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { email, text } from "../../platform/fields";
import { internalRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { adminAccountSchema, limitOverridesSchema, presentAdminAccount, toLimitOverrides } from "../../resources/admin";
import { accountParams, tags } from "./shared";

export const route = internalRoute(
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

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { kyc_status, risk_review, limits, ...patch } = c.req.valid("json");
  const account = await adminUpdateAccount(c.get("ctx"), c.req.valid("param").id, {
    ...patch,
    kycStatus: kyc_status,
    riskReview: risk_review,
    limits: limits ? toLimitOverrides(limits) : limits,
  });
  return c.json(presentAdminAccount(account), 200);
};

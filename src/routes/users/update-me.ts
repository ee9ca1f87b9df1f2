import { type RouteHandler, z } from "@hono/zod-openapi";
import { updateProfile, validateProfilePatch } from "../../domain/accounts/accounts";
import { domainContext } from "../../domain/context";
import type { AppEnv } from "../../env";
import { currentAccount } from "../../middleware/current-account";
import { requireMfa } from "../../middleware/gates";
import { apiRoute, jsonBody, jsonContent } from "../../platform/openapi";
import { accountSchema, billingAddressSchema, presentAccount, supportedCurrencies } from "../../schemas/account";

const body = z
  .strictObject({
    company: z.string().trim().min(1).max(200).nullable().optional(),
    billing_address: billingAddressSchema.nullable().optional(),
    tax_id: z.string().trim().min(2).max(40).nullable().optional(),
    default_currency: z.enum(supportedCurrencies).optional(),
    notification_email: z.email().max(254).nullable().optional(),
  })
  .openapi("AccountUpdate", {
    example: { company: "Acme Data Ltd", notification_email: "ops@acme.example" },
  });

export const route = apiRoute({
  method: "patch",
  path: "/users/me",
  tags: ["Account"],
  summary: "Update the account",
  description:
    "Only `company`, `billing_address`, `tax_id`, `default_currency` and `notification_email` are editable; any other field is rejected. " +
    "The login email is changed in the dashboard. When MFA is enabled, changing `billing_address` or `tax_id` needs `X-MFA-Code`.",
  request: { body: jsonBody(body) },
  errors: ["invalid_billing_address", "mfa_required"],
  responses: { 200: jsonContent(accountSchema, "The updated account.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const patch = c.req.valid("json");
  const account = await currentAccount(c);
  if (patch.billing_address !== undefined || patch.tax_id !== undefined) {
    validateProfilePatch(account, patch); // before the MFA code is spent on a doomed request
    await requireMfa(c, account);
  }
  return c.json(presentAccount(await updateProfile(domainContext(c.env), account, patch)), 200);
};

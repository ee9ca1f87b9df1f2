import { type RouteHandler, z } from "@hono/zod-openapi";
import { updateProfile } from "../../domain/accounts/accounts";
import type { AppEnv } from "../../env";
import { email, text } from "../../platform/fields";
import { apiRoute, jsonBody, jsonContent } from "../../platform/route-definitions";
import { mfaCode } from "../../platform/route-middleware";
import {
  accountSchema,
  billingAddressSchema,
  presentAccount,
  supportedCurrencies,
  toBillingAddress,
} from "../../resources/account";

const body = z
  .strictObject({
    company: text(200, 1).trim().nullable().optional(),
    billing_address: billingAddressSchema.nullable().optional(),
    tax_id: text(40, 2).trim().nullable().optional(),
    default_currency: z.enum(supportedCurrencies).optional(),
    notification_email: email().nullable().optional(),
  })
  .openapi("AccountUpdate", { example: { company: "Acme Data Ltd", notification_email: "ops@acme.example" } });

export const route = apiRoute({
  operationId: "updateAccount",
  method: "patch",
  path: "/users/me",
  tags: ["Account"],
  summary: "Update the account",
  description:
    "Only `company`, `billing_address`, `tax_id`, `default_currency` and `notification_email` are editable; any " +
    "other field is rejected. The login email is changed in the dashboard. When MFA is enabled, changing " +
    "`billing_address` or `tax_id` needs `X-MFA-Code`.",
  request: { body: jsonBody(body) },
  mfa: true,
  errors: ["invalid_billing_address"],
  responses: { 200: jsonContent(accountSchema, "The updated account.") },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const input = c.req.valid("json");
  const account = await updateProfile(
    c.get("ctx"),
    c.get("principal"),
    {
      company: input.company,
      billingAddress: input.billing_address ? toBillingAddress(input.billing_address) : input.billing_address,
      taxId: input.tax_id,
      defaultCurrency: input.default_currency,
      notificationEmail: input.notification_email,
    },
    mfaCode(c),
  );
  return c.json(presentAccount(account), 200);
};

import { z } from "@hono/zod-openapi";
import { type AccountRow, type BillingAddress, kycStatuses, plans } from "../db/schema";
import { toIso } from "../platform/clock";
import { countryCode, email, id, ipText, text, timestamp, token, usdAmount } from "../platform/fields";
import { fromMinor } from "../platform/money";

const upperCase = (value: string) => value.toUpperCase();

export const billingAddressSchema = z
  .strictObject({
    line1: text(200, 1).trim(),
    line2: text(200).trim().nullish(),
    city: text(100, 1).trim(),
    state: token(/^[A-Za-z0-9-]{1,10}$/, 10, "must be a state or province code")
      .transform(upperCase)
      .nullish(),
    postal_code: token(/^[A-Za-z0-9 -]{1,20}$/, 20, "must be a postal code")
      .transform(upperCase)
      .nullish(),
    country: countryCode().transform(upperCase).openapi({ description: "ISO 3166-1 alpha-2" }),
  })
  .openapi("BillingAddress", {
    example: { line1: "1 Market St", city: "San Francisco", state: "CA", postal_code: "94105", country: "US" },
  });

export function toBillingAddress(address: z.infer<typeof billingAddressSchema>): BillingAddress {
  const { postal_code, ...rest } = address;
  return { ...rest, postalCode: postal_code ?? null };
}

function presentBillingAddress(address: BillingAddress) {
  const { postalCode, ...rest } = address;
  return { ...rest, line2: rest.line2 ?? null, state: rest.state ?? null, postal_code: postalCode ?? null };
}

export const supportedCurrencies = ["USD", "EUR", "GBP", "CAD", "AUD", "CHF", "JPY", "SGD", "BRL", "INR"] as const;

export const accountSchema = z
  .object({
    id: id("account"),
    email: email(),
    company: text(200).nullable(),
    plan: z.enum(plans),
    kyc_status: z.enum(kycStatuses),
    created_at: timestamp(),
    balance: z.object({
      currency: z.enum(["USD"]),
      amount: usdAmount().openapi({ description: "Prepaid credit, decimal.", example: 250.5 }),
    }),
    billing_address: z
      .object({
        line1: text(200),
        line2: text(200).nullable(),
        city: text(100),
        state: token(/^[A-Z0-9-]{1,10}$/, 10).nullable(),
        postal_code: token(/^[A-Z0-9 -]{1,20}$/, 20).nullable(),
        country: countryCode(),
      })
      .nullable(),
    tax_id: token(/^[A-Z0-9]{2,40}$/, 40).nullable(),
    default_currency: z.enum(supportedCurrencies),
    notification_email: email().nullable(),
  })
  .openapi("Account");

export type AccountResource = z.infer<typeof accountSchema>;

export function presentAccount(account: AccountRow): AccountResource {
  return {
    id: account.id,
    email: account.email,
    company: account.company,
    plan: account.plan,
    kyc_status: account.kycStatus,
    created_at: toIso(account.createdAt),
    balance: { currency: "USD", amount: fromMinor(account.balanceMinor) },
    billing_address: account.billingAddress ? presentBillingAddress(account.billingAddress) : null,
    tax_id: account.taxId,
    default_currency: account.defaultCurrency as AccountResource["default_currency"],
    notification_email: account.notificationEmail,
  };
}

export const securitySchema = z
  .object({
    mfa_enabled: z.boolean(),
    mfa_method: z.enum(["totp"]).nullable(),
    mfa_pending: z.boolean().openapi({ description: "An enrollment awaits its first code at /mfa/verify." }),
    last_login_at: timestamp().nullable(),
    last_login_ip: ipText().nullable(),
  })
  .openapi("SecurityInfo");

export function presentSecurity(account: AccountRow): z.infer<typeof securitySchema> {
  return {
    mfa_enabled: account.mfaEnabled,
    mfa_method: account.mfaEnabled ? "totp" : null,
    mfa_pending: account.mfaPendingSecretSealed !== null,
    last_login_at: account.lastLoginAt === null ? null : toIso(account.lastLoginAt),
    last_login_ip: account.lastLoginIp,
  };
}

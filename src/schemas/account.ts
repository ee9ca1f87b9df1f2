import { z } from "@hono/zod-openapi";
import { type AccountRow, kycStatuses, plans } from "../db/schema";
import { toIso } from "../platform/clock";
import { fromMinor } from "../platform/money";

const upperCode = (length: number) =>
  z
    .string()
    .regex(new RegExp(`^[A-Za-z]{${length}}$`), `must be ${length} letters`)
    .transform((value) => value.toUpperCase());

export const billingAddressSchema = z
  .strictObject({
    line1: z.string().trim().min(1).max(200),
    line2: z.string().trim().max(200).nullish(),
    city: z.string().trim().min(1).max(100),
    state: z
      .string()
      .trim()
      .min(1)
      .max(10)
      .transform((v) => v.toUpperCase())
      .nullish(),
    postal_code: z
      .string()
      .trim()
      .min(1)
      .max(20)
      .transform((v) => v.toUpperCase())
      .nullish(),
    country: upperCode(2).openapi({ description: "ISO 3166-1 alpha-2", example: "US" }),
  })
  .openapi("BillingAddress", {
    example: { line1: "1 Market St", city: "San Francisco", state: "CA", postal_code: "94105", country: "US" },
  });

export const supportedCurrencies = ["USD", "EUR", "GBP", "CAD", "AUD", "CHF", "JPY", "SGD", "BRL", "INR"] as const;

export const accountSchema = z
  .object({
    id: z.string().openapi({ example: "usr_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    email: z.email(),
    company: z.string().nullable(),
    plan: z.enum(plans),
    kyc_status: z.enum(kycStatuses),
    created_at: z.iso.datetime(),
    balance: z.object({
      currency: z.string().openapi({ example: "USD" }),
      amount: z.number().openapi({ description: "Prepaid credit, decimal.", example: 250.5 }),
    }),
    billing_address: billingAddressSchema.nullable(),
    tax_id: z.string().nullable(),
    default_currency: z.string().openapi({ example: "USD" }),
    notification_email: z.email().nullable(),
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
    balance: { currency: account.currency, amount: fromMinor(account.balanceMinor) },
    billing_address: account.billingAddress ?? null,
    tax_id: account.taxId,
    default_currency: account.defaultCurrency,
    notification_email: account.notificationEmail,
  };
}

export const securitySchema = z
  .object({
    mfa_enabled: z.boolean(),
    mfa_method: z.enum(["totp"]).nullable(),
    mfa_pending: z.boolean().openapi({ description: "An enrollment awaits its first code at /mfa/verify." }),
    last_login_at: z.iso.datetime().nullable(),
    last_login_ip: z.string().nullable(),
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

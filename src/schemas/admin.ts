import { z } from "@hono/zod-openapi";
import { type AccountRow, type ApiKeyRow, products } from "../db/schema";
import { toIso } from "../platform/clock";
import { accountSchema, presentAccount } from "./account";

const limitValue = z.number().int().min(1).max(1_000_000_000);

export const limitOverridesSchema = z
  .strictObject({
    api_burst_per_min: limitValue.optional(),
    api_daily: limitValue.nullable().optional().openapi({ description: "null = unlimited" }),
    concurrent: z.strictObject({ residential: limitValue.optional(), mobile: limitValue.optional() }).optional(),
    rps: z.strictObject({ residential: limitValue.optional(), mobile: limitValue.optional() }).optional(),
  })
  .openapi("LimitOverrides", { example: { api_burst_per_min: 5000, concurrent: { residential: 10000 } } });

export const adminAccountSchema = accountSchema
  .extend({
    risk_review: z.boolean(),
    limits: limitOverridesSchema.nullable(),
  })
  .openapi("AdminAccount");

export function presentAdminAccount(account: AccountRow): z.infer<typeof adminAccountSchema> {
  return { ...presentAccount(account), risk_review: account.riskReview, limits: account.limits ?? null };
}

export const productScopeSchema = z
  .array(z.enum(products))
  .min(1)
  .refine((list) => new Set(list).size === list.length, "must not repeat a product");

export const apiKeySchema = z
  .object({
    id: z.string().openapi({ example: "key_01JD2W6Q6J5E4V3N0Z9Y8X7W6V" }),
    token_hint: z.string().openapi({ description: "First characters of the token.", example: "live_Ab12Cd" }),
    products: z.array(z.enum(products)).nullable().openapi({ description: "Product scope; null = all products." }),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .openapi("ApiKey");

export function presentApiKey(key: ApiKeyRow): z.infer<typeof apiKeySchema> {
  return {
    id: key.id,
    token_hint: key.tokenHint,
    products: key.products,
    created_at: toIso(key.createdAt),
    revoked_at: key.revokedAt === null ? null : toIso(key.revokedAt),
  };
}

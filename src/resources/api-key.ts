import { z } from "@hono/zod-openapi";
import type { ApiKeyRow } from "../db/schema";
import { type KeyChanges, MAX_BOUND_SUBUSERS } from "../domain/api-keys/management";
import { toIso } from "../platform/clock";
import { id, idParam, instant, ipText, list, text, timestamp, token } from "../platform/fields";
import { type KeyScopes, keyAccesses, keyAreas } from "../vocabulary";
import { productListSchema } from "./vocabulary";

const access = z.enum(keyAccesses).openapi({ description: "`write` includes `read`." });

/** Per area, the access a key has; an area left out is not accessible. */
export const keyScopesSchema = z
  .strictObject(
    Object.fromEntries(keyAreas.map((area) => [area, access.optional()])) as Record<
      string,
      z.ZodOptional<typeof access>
    >,
  )
  .openapi("ApiKeyScopes", {
    description:
      "Access per area: `account` (profile, MFA), `billing` (orders, quotes, balances, subscriptions), `subusers` " +
      "(with whitelists and the proxy test), `isp`, `traffic` (sessions, analytics, request log), `reports`, " +
      "`webhooks` (endpoints, events), `api_keys`. A call outside them is 403 `insufficient_scope`.",
    example: { billing: "read", traffic: "read" },
  });

export const apiKeyIdParam = z.object({ id: idParam("apiKey") });

export const apiKeySchema = z
  .object({
    id: id("apiKey"),
    name: text(100).nullable(),
    token_hint: token(/^(live|test)_[0-9A-Za-z]{6}$/, 11).openapi({
      description: "First characters of the token, to tell keys apart.",
      example: "live_Ab12Cd",
    }),
    products: productListSchema.nullable().openapi({ description: "Product scope; null = every product." }),
    scopes: keyScopesSchema,
    subuser_ids: list(id("subuser"), MAX_BOUND_SUBUSERS)
      .nullable()
      .openapi({
        description:
          "The sub-users the key is bound to: it sees and acts on them alone (their traffic, sessions, request log, " +
          "whitelists, passwords), never the account's money, totals or other sub-users. null = not bound.",
      }),
    expires_at: timestamp().nullable().openapi({ description: "From then on the key answers 401; null = never." }),
    last_used_at: timestamp().nullable().openapi({ description: "Recorded at most once a minute." }),
    last_used_ip: ipText().nullable(),
    created_at: timestamp(),
  })
  .openapi("ApiKey");

/** A key with its token: shown once, on creation and rotation. */
export const apiKeyWithTokenSchema = apiKeySchema
  .extend({
    token: token(/^(live|test)_[0-9A-Za-z]{64}$/, 69).openapi({ description: "Shown once; stored only hashed." }),
    previous_token_expires_at: timestamp().nullable().openapi({
      description: "After a rotation: until when the replaced token still works (null: it no longer does).",
    }),
  })
  .openapi("ApiKeyWithToken");

/** The fields a key is created or changed with. */
export const apiKeyChangesSchema = z
  .strictObject({
    name: text(100).nullable().optional(),
    products: productListSchema
      .nullable()
      .optional()
      .openapi({ description: "Within the calling key's products. Omit: the calling key's." }),
    scopes: keyScopesSchema
      .optional()
      .openapi({ description: "At most the calling key's access per area. Omit: the calling key's." }),
    subuser_ids: list(idParam("subuser"), MAX_BOUND_SUBUSERS)
      .min(1)
      .nullable()
      .optional()
      .openapi({
        description:
          "Binds the key to these sub-users (1-1,000): live sub-users of the account within the calling key's " +
          "product scope, else 404 `subuser_not_found`. A bound calling key may bind only to some of its own " +
          "sub-users (null, not bound, is then 403 `insufficient_scope`). Omit: the calling key's binding.",
      }),
    expires_at: instant()
      .nullable()
      .optional()
      .openapi({ description: "In the future; no later than the calling key's own expiry. null: never." }),
  })
  .openapi("ApiKeyChanges", {
    example: { name: "billing export", scopes: { billing: "read" }, expires_at: "2027-01-01T00:00:00Z" },
  });

export function keyChanges(body: z.infer<typeof apiKeyChangesSchema>): KeyChanges {
  return {
    ...(body.name === undefined ? {} : { name: body.name }),
    ...(body.products === undefined ? {} : { products: body.products }),
    ...(body.scopes === undefined ? {} : { scopes: body.scopes as KeyScopes }),
    ...(body.subuser_ids === undefined ? {} : { subuserIds: body.subuser_ids }),
    ...(body.expires_at === undefined ? {} : { expiresAt: body.expires_at }),
  };
}

export function presentApiKey(key: ApiKeyRow): z.infer<typeof apiKeySchema> {
  return {
    id: key.id,
    name: key.name,
    token_hint: key.tokenHint,
    products: key.products,
    scopes: key.scopes ?? Object.fromEntries(keyAreas.map((area) => [area, "write"])),
    subuser_ids: key.subuserIds,
    expires_at: key.expiresAt === null ? null : toIso(key.expiresAt),
    last_used_at: key.lastUsedAt === null ? null : toIso(key.lastUsedAt),
    last_used_ip: key.lastUsedIp,
    created_at: toIso(key.createdAt),
  };
}

export function presentApiKeyWithToken(key: ApiKeyRow, secret: string): z.infer<typeof apiKeyWithTokenSchema> {
  return {
    ...presentApiKey(key),
    token: secret,
    previous_token_expires_at: key.previousTokenExpiresAt === null ? null : toIso(key.previousTokenExpiresAt),
  };
}

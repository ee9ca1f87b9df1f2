import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { type KeyScopes, type Product, plans } from "../../vocabulary";

export { type BandwidthProduct, bandwidthProducts, type Plan, type Product, plans, products } from "../../vocabulary";

export const kycStatuses = ["not-submitted", "pending", "approved", "rejected"] as const;
export type KycStatus = (typeof kycStatuses)[number];

export interface BillingAddress {
  line1: string;
  line2?: string | null;
  city: string;
  state?: string | null;
  postalCode?: string | null;
  country: string;
}

/** Per-account overrides of plan limits (enterprise / custom plans). */
export interface LimitOverrides {
  apiBurstPerMin?: number;
  /** null = unlimited. */
  apiDaily?: number | null;
  concurrent?: Partial<Record<Product, number>>;
  rps?: Partial<Record<Product, number>>;
}

const inList = (column: string, values: readonly string[]) =>
  sql.raw(`${column} IN (${values.map((v) => `'${v}'`).join(", ")})`);

export const accounts = sqliteTable(
  "accounts",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull().unique(),
    company: text("company"),
    plan: text("plan", { enum: plans }).notNull(),
    kycStatus: text("kyc_status", { enum: kycStatuses }).notNull().default("not-submitted"),
    riskReview: integer("risk_review", { mode: "boolean" }).notNull().default(false),
    // Money in integer minor units; the CHECK makes a negative balance impossible whatever the code does.
    balanceMinor: integer("balance_minor").notNull().default(0),
    currency: text("currency").notNull().default("USD"),
    billingAddress: text("billing_address", { mode: "json" }).$type<BillingAddress>(),
    taxId: text("tax_id"),
    defaultCurrency: text("default_currency").notNull().default("USD"),
    notificationEmail: text("notification_email"),
    limits: text("limits", { mode: "json" }).$type<LimitOverrides>(),
    mfaEnabled: integer("mfa_enabled", { mode: "boolean" }).notNull().default(false),
    mfaSecretSealed: text("mfa_secret_sealed"),
    mfaPendingSecretSealed: text("mfa_pending_secret_sealed"),
    // The last TOTP time step accepted: a code is good once.
    mfaLastStep: integer("mfa_last_step"),
    lastLoginAt: integer("last_login_at"),
    lastLoginIp: text("last_login_ip"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Moves on every write of the row (commit order): cached reads of the account are tied to it. */
    version: integer("version").notNull().default(0),
    /** Traffic stores the account's usage is split over by sub-user: a power of two, only doubled (docs/scale.md). */
    trafficShards: integer("traffic_shards").notNull().default(1),
  },
  (t) => [
    check("accounts_balance_non_negative", sql`${t.balanceMinor} >= 0`),
    check("accounts_plan_known", inList("plan", plans)),
    check("accounts_kyc_known", inList("kyc_status", kycStatuses)),
  ],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    tokenHash: text("token_hash").notNull().unique(),
    // First characters of the token, safe to show in dashboards to tell keys apart.
    tokenHint: text("token_hint").notNull(),
    // null = every product.
    products: text("products", { mode: "json" }).$type<Product[]>(),
    /** What the key may do per area; null = everything (keys made before scopes, and full keys). */
    scopes: text("scopes", { mode: "json" }).$type<KeyScopes>(),
    /** The sub-users the key is bound to: it sees and manages only them (null: not bound). */
    subuserIds: text("subuser_ids", { mode: "json" }).$type<string[]>(),
    name: text("name"),
    expiresAt: integer("expires_at"),
    lastUsedAt: integer("last_used_at"),
    lastUsedIp: text("last_used_ip"),
    /** After a rotation, the replaced token's hash, accepted until `previous_token_expires_at`. */
    previousTokenHash: text("previous_token_hash").unique(),
    previousTokenExpiresAt: integer("previous_token_expires_at"),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
    /** The member who made the key (a developer manages only its own keys); null: made by a key or an operator. */
    memberId: text("member_id"),
  },
  (t) => [index("api_keys_account").on(t.accountId)],
);

export const mfaRecoveryCodes = sqliteTable(
  "mfa_recovery_codes",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    codeHash: text("code_hash").notNull(),
    // Codes of an enrollment that is not verified yet stay pending until the first TOTP code.
    pending: integer("pending", { mode: "boolean" }).notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.codeHash] })],
);

export type AccountRow = typeof accounts.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;

/**
 * Every movement of money. The account's balance always equals the sum of its entries:
 * both are written in the same D1 batch.
 */
export const ledgerEntries = sqliteTable(
  "ledger_entries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    // Signed minor units: credits positive, debits negative.
    amountMinor: integer("amount_minor").notNull(),
    reason: text("reason").notNull(),
    reference: text("reference"),
    /** Set on charges made by jobs (renewals): a repeated or overlapping run cannot charge twice. */
    uniqueKey: text("unique_key").unique(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("ledger_entries_account").on(t.accountId, t.id),
    // A month's charges of an account (its spend budget), by time: ids of entries made while the clock stood
    // behind an earlier id's time carry that earlier time.
    index("ledger_entries_account_time").on(t.accountId, t.createdAt),
  ],
);

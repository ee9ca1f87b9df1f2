import { sql } from "drizzle-orm";
import {
  type AnySQLiteColumn,
  check,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import type { BandwidthProduct } from "../../vocabulary";
import { accounts, type Product } from "./accounts";
import { subusers } from "./subusers";

// ── Price catalogue (editable through the admin API) ────────────────────────────────────────────────

export const bandwidthPrices = sqliteTable("bandwidth_prices", {
  product: text("product").$type<BandwidthProduct>().primaryKey(),
  pricePerGbMinor: integer("price_per_gb_minor").notNull(),
});

/** ISP price per IP per month for an ASN of a country; premium ASNs cost more. */
export const ispAsns = sqliteTable(
  "isp_asns",
  {
    country: text("country").notNull(),
    asn: integer("asn").notNull(),
    carrier: text("carrier").notNull(),
    premium: integer("premium", { mode: "boolean" }).notNull().default(false),
    pricePerIpMonthMinor: integer("price_per_ip_month_minor").notNull(),
  },
  (t) => [primaryKey({ columns: [t.country, t.asn] })],
);

export const subscriptionTiers = sqliteTable(
  "subscription_tiers",
  {
    product: text("product").$type<BandwidthProduct>().notNull(),
    plan: text("plan").notNull(),
    gbIncluded: integer("gb_included").notNull(),
    monthlyPriceMinor: integer("monthly_price_minor").notNull(),
  },
  (t) => [primaryKey({ columns: [t.product, t.plan] })],
);

/** Enterprise ("custom") tiers: set per account by an operator. */
export const customTiers = sqliteTable(
  "custom_tiers",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    product: text("product").$type<BandwidthProduct>().notNull(),
    gbIncluded: integer("gb_included").notNull(),
    monthlyPriceMinor: integer("monthly_price_minor").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.product] })],
);

// ── Bandwidth pools ─────────────────────────────────────────────────────────────────────────────────

/**
 * Prepaid bandwidth per account and gateway product, in bytes (1 GB = 10^9 bytes). Orders and subscription periods
 * add to `purchased_bytes`; gateway usage adds to `used_bytes`, after the fact, so it may pass `purchased_bytes`.
 */
export const bandwidthPools = sqliteTable(
  "bandwidth_pools",
  {
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    product: text("product").$type<BandwidthProduct>().notNull(),
    purchasedBytes: integer("purchased_bytes").notNull().default(0),
    usedBytes: integer("used_bytes").notNull().default(0),
    /** Moves on every top-up: threshold events (80%, 100% used) fire once per top-up. */
    topUpCount: integer("top_up_count").notNull().default(0),
    /** What the sub-users' gates were last told: the pool is used up and new proxy requests are refused. */
    exhausted: integer("exhausted", { mode: "boolean" }).notNull().default(false),
    /** Moves on every flip of `exhausted`. */
    flips: integer("flips").notNull().default(0),
    /** The last flip the gates confirmed they were told of; behind `flips`, the cron tells them again. */
    flipsTold: integer("flips_told").notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.product] }),
    // Only pools whose gates may not know their state: what the cron looks for every minute.
    index("bandwidth_pools_gates_behind").on(t.accountId).where(poolGatesBehind(t)),
  ],
);

type PoolColumns = Record<"exhausted" | "usedBytes" | "purchasedBytes" | "flips" | "flipsTold", AnySQLiteColumn>;

/** The pool's `exhausted` flag differs from its figures: a flip is due and its gates have not been told. */
export function poolFlipDue(t: PoolColumns) {
  return sql`${t.exhausted} <> (${t.usedBytes} >= ${t.purchasedBytes})`;
}

/**
 * A flip is due, or one was made and its gates did not confirm it: the partial index's condition, which a query
 * must repeat exactly for SQLite to use the index.
 */
export function poolGatesBehind(t: PoolColumns) {
  return sql`${t.flipsTold} < ${t.flips} OR ${poolFlipDue(t)}`;
}

// ── Orders ──────────────────────────────────────────────────────────────────────────────────────────

export const orderStatuses = ["provisioning", "completed"] as const;
export type OrderStatus = (typeof orderStatuses)[number];

/** What a bandwidth order bought. */
export interface BandwidthOrderDetails {
  gb: number;
  pricePerGbMinor: number;
}

/** What an ISP order bought: the batch it created and the terms it was created with. */
export interface IspOrderDetails {
  batchId: string;
  quantity: number;
  country: string;
  city: string | null;
  asn: number;
  months: number;
  pricePerIpMonthMinor: number;
  expiresAt: number;
}

export type OrderDetails = BandwidthOrderDetails | IspOrderDetails;

export const orders = sqliteTable(
  "orders",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    product: text("product").$type<Product>().notNull(),
    status: text("status", { enum: orderStatuses }).notNull(),
    totalMinor: integer("total_minor").notNull(),
    details: text("details", { mode: "json" }).$type<OrderDetails>().notNull(),
    batchId: text("batch_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("orders_account").on(t.accountId, t.id)],
);

// ── ISP batches and IPs ─────────────────────────────────────────────────────────────────────────────

export const batchStatuses = ["provisioning", "active", "grace", "released"] as const;
export type BatchStatus = (typeof batchStatuses)[number];

export const ispBatches = sqliteTable(
  "isp_batches",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    subuserId: text("subuser_id")
      .notNull()
      .references(() => subusers.id),
    orderId: text("order_id").notNull(),
    status: text("status", { enum: batchStatuses }).notNull(),
    country: text("country").notNull(),
    city: text("city"),
    asn: integer("asn").notNull(),
    quantity: integer("quantity").notNull(),
    pricePerIpMonthMinor: integer("price_per_ip_month_minor").notNull(),
    purchasedAt: integer("purchased_at").notNull(),
    periodStart: integer("period_start").notNull(),
    expiresAt: integer("expires_at").notNull(),
    autoRenew: integer("auto_renew", { mode: "boolean" }).notNull().default(true),
    /** Months bought by an automatic renewal: 1, or 12 under an annual ISP subscription. */
    renewalMonths: integer("renewal_months").notNull().default(1),
    replacementsUsed: integer("replacements_used").notNull().default(0),
    refreshUsed: integer("refresh_used", { mode: "boolean" }).notNull().default(false),
    provisionReadyAt: integer("provision_ready_at"),
    graceUntil: integer("grace_until"),
    releasedAt: integer("released_at"),
    // The batch password is listed with the IPs, so it is sealed (AES-GCM), and hashed for the gateway's check.
    passwordSealed: text("password_sealed").notNull(),
    passwordHash: text("password_hash").notNull(),
    previousPasswordHash: text("previous_password_hash"),
    previousPasswordUntil: integer("previous_password_until"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("isp_batches_account").on(t.accountId, t.id),
    index("isp_batches_status").on(t.status),
    check("isp_batches_quantity", sql`quantity BETWEEN 1 AND 5000`),
  ],
);

export const ipStatuses = ["available", "reserved", "assigned"] as const;

/** The static IP inventory; an IP belongs to at most one batch at a time. */
export const ispIps = sqliteTable(
  "isp_ips",
  {
    id: text("id").primaryKey(),
    ip: text("ip").notNull().unique(),
    port: integer("port").notNull().default(8000),
    country: text("country").notNull(),
    city: text("city"),
    asn: integer("asn").notNull(),
    carrier: text("carrier").notNull(),
    status: text("status", { enum: ipStatuses }).notNull().default("available"),
    batchId: text("batch_id"),
    assignedAt: integer("assigned_at"),
    /** A simulated IP of the sandbox's own inventory (198.18.0.0/15): sandbox orders never take live IPs. */
    sandbox: integer("sandbox", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    index("isp_ips_stock").on(t.sandbox, t.status, t.country, t.asn, t.city),
    index("isp_ips_batch").on(t.batchId),
  ],
);

/** The conditions a guarded batch can assert; each has its own CHECK so a failure says which one broke. */
export const assertionKinds = ["inventory", "state", "quota", "budget"] as const;
export type AssertionKind = (typeof assertionKinds)[number];

/**
 * Inserting a row here aborts a D1 batch: `INSERT INTO batch_assertions (failed) SELECT 'inventory' WHERE <bad>`
 * turns "this must hold" into an atomic rollback, since a batch cannot read and then decide.
 */
export const batchAssertions = sqliteTable(
  "batch_assertions",
  {
    failed: text("failed").notNull(),
  },
  (t) => assertionKinds.map((kind) => check(`assert_${kind}`, sql`${t.failed} <> ${sql.raw(`'${kind}'`)}`)),
);

// ── Subscriptions ───────────────────────────────────────────────────────────────────────────────────

export const subscriptionStatuses = ["active", "paused", "cancelling", "past_due", "cancelled"] as const;
export type SubscriptionStatus = (typeof subscriptionStatuses)[number];
export const cycles = ["monthly", "annual"] as const;
export type Cycle = (typeof cycles)[number];

export const subscriptions = sqliteTable(
  "subscriptions",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    product: text("product").$type<Product>().notNull(),
    plan: text("plan"),
    batchId: text("batch_id"),
    cycle: text("cycle", { enum: cycles }).notNull(),
    quantity: integer("quantity"),
    gbIncluded: integer("gb_included"),
    priceMinor: integer("price_minor").notNull(),
    status: text("status", { enum: subscriptionStatuses }).notNull(),
    periodStart: integer("period_start").notNull(),
    renewsAt: integer("renews_at").notNull(),
    /** The pool's used_bytes when this period began: usage of the period = pool.used_bytes − this. */
    periodStartUsedBytes: integer("period_start_used_bytes").notNull().default(0),
    pendingPlan: text("pending_plan"),
    pendingCycle: text("pending_cycle", { enum: cycles }),
    pendingQuantity: integer("pending_quantity"),
    pastDueSince: integer("past_due_since"),
    archivedAt: integer("archived_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("subscriptions_account").on(t.accountId, t.id),
    index("subscriptions_due").on(t.status, t.renewsAt),
    // One live subscription per product and plan, and one per ISP batch: races cannot create a second.
    uniqueIndex("subscriptions_live_plan")
      .on(t.accountId, t.product, t.plan)
      .where(sql`status <> 'cancelled' AND batch_id IS NULL`),
    uniqueIndex("subscriptions_live_batch").on(t.batchId).where(sql`status <> 'cancelled' AND batch_id IS NOT NULL`),
  ],
);

// ── Events (ready for webhook delivery) ─────────────────────────────────────────────────────────────

export const events = sqliteTable(
  "events",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    type: text("type").notNull(),
    payload: text("payload", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** The same occurrence is recorded once, however often a job runs. */
    dedupeKey: text("dedupe_key").notNull().unique(),
    createdAt: integer("created_at").notNull(),
    deliveredAt: integer("delivered_at"),
  },
  (t) => [
    index("events_account").on(t.accountId, t.id),
    // The webhook dispatcher's outbox scan (src/domain/webhooks/dispatch.ts).
    index("events_undelivered").on(t.id).where(sql`delivered_at IS NULL`),
  ],
);

export type OrderRow = typeof orders.$inferSelect;
export type BatchRow = typeof ispBatches.$inferSelect;
export type IspIpRow = typeof ispIps.$inferSelect;
export type SubscriptionRow = typeof subscriptions.$inferSelect;

/** Every IP replacement, with the customer's reason and what it cost. */
export const ipReplacements = sqliteTable(
  "ip_replacements",
  {
    id: text("id").primaryKey(),
    batchId: text("batch_id").notNull(),
    replacedIpId: text("replaced_ip_id").notNull(),
    reason: text("reason").notNull(),
    free: integer("free", { mode: "boolean" }).notNull(),
    chargedMinor: integer("charged_minor").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("ip_replacements_batch").on(t.batchId, t.id)],
);

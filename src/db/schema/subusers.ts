import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import type { TargetRules } from "../../platform/target-rules";
import { accounts, type Product } from "./accounts";

export const subuserStatuses = ["active", "disabled"] as const;
export type SubuserStatus = (typeof subuserStatuses)[number];

/** Spike alerts per sub-user: a sensitivity, or off; and what happens on its own when an episode starts. */
export const spikeSettings = ["off", "low", "medium", "high"] as const;
export type SpikeSettingValue = (typeof spikeSettings)[number];
export const spikeActions = ["none", "disable", "cap"] as const;
export type SpikeAction = (typeof spikeActions)[number];

export { type TargetRules, targetRuleModes } from "../../platform/target-rules";

/**
 * Deleted sub-users keep their row (deleted_at set): their generated `name` stays taken forever,
 * while their label is free again for a new sub-user.
 */
export const subusers = sqliteTable(
  "subusers",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    name: text("name").notNull().unique(),
    label: text("label").notNull(),
    products: text("products", { mode: "json" }).$type<Product[]>().notNull(),
    status: text("status", { enum: subuserStatuses }).notNull().default("active"),
    concurrentMax: integer("concurrent_max").notNull(),
    rpsMax: integer("rps_max").notNull(),
    passwordHash: text("password_hash").notNull(),
    // After a rotation the replaced password keeps working until previous_password_until (60 s).
    previousPasswordHash: text("previous_password_hash"),
    previousPasswordUntil: integer("previous_password_until"),
    /** Optional monthly (UTC) traffic cap in bytes; over it, new proxy requests are refused. */
    trafficLimitBytes: integer("traffic_limit_bytes"),
    /** Optional caps per UTC day and over the sub-user's whole life, in bytes (null: none). */
    dailyLimitBytes: integer("daily_limit_bytes"),
    lifetimeLimitBytes: integer("lifetime_limit_bytes"),
    /** Destinations its requests may reach (null: any). */
    targetRules: text("target_rules", { mode: "json" }).$type<TargetRules>(),
    /** From this instant its requests are refused (null: never). */
    expiresAt: integer("expires_at"),
    /** The `expires_at` whose `subuser.expired` event was raised: once per expiry, again after an extension lapses. */
    expiryAnnouncedFor: integer("expiry_announced_for"),
    /** Opt-in: a `subuser.new_source` event when its traffic comes from a client block never seen before. */
    alertOnNewSource: integer("alert_on_new_source", { mode: "boolean" }).notNull().default(false),
    spikeSensitivity: text("spike_sensitivity", { enum: spikeSettings }).notNull().default("medium"),
    spikeAction: text("spike_action", { enum: spikeActions }).notNull().default("none"),
    /** Requests per second the gate allows while a `cap` action waits to be acknowledged (null: none). */
    spikeCapRps: integer("spike_cap_rps"),
    /**
     * The traffic-spike episode whose `disable` action holds the sub-user disabled (null: none, or the customer has
     * set its status since): acknowledging an episode re-enables only a sub-user it disabled itself.
     */
    spikeDisabledBy: text("spike_disabled_by"),
    /** The episode whose `cap` action set `spike_cap_rps` (null: none). */
    spikeCappedBy: text("spike_capped_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    deletedAt: integer("deleted_at"),
  },
  (t) => [
    uniqueIndex("subusers_live_label").on(t.accountId, t.label).where(sql`deleted_at IS NULL`),
    index("subusers_account").on(t.accountId, t.id),
    check("subusers_status_known", sql`status IN ('active', 'disabled')`),
    check("subusers_limits_range", sql`concurrent_max BETWEEN 1 AND 10000 AND rps_max BETWEEN 1 AND 10000`),
    index("subusers_expiring").on(t.expiresAt).where(sql`expires_at IS NOT NULL AND deleted_at IS NULL`),
  ],
);

/**
 * Whitelist entries of every scope: a sub-user and one of its products, or (ISP) a batch.
 * `ip` is the canonical text of an address or block, so equal entries compare equal.
 */
export const whitelistScopes = ["subuser", "batch"] as const;
export type WhitelistScope = (typeof whitelistScopes)[number];

export const whitelistEntries = sqliteTable(
  "whitelist_entries",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    scope: text("scope", { enum: whitelistScopes }).notNull(),
    scopeId: text("scope_id").notNull(),
    product: text("product").$type<Product>().notNull(),
    ip: text("ip").notNull(),
    label: text("label"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("whitelist_entries_unique").on(t.scope, t.scopeId, t.product, t.ip),
    index("whitelist_entries_account").on(t.accountId, t.id),
  ],
);

/**
 * Traffic of a capped sub-user per period, in bytes, for its caps: a UTC month (`2026-11`), a UTC day
 * (`2026-11-28`) or its whole life (`lifetime`).
 */
export const subuserMonthlyUsage = sqliteTable(
  "subuser_monthly_usage",
  {
    subuserId: text("subuser_id").notNull(),
    month: text("month").notNull(),
    usedBytes: integer("used_bytes").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.subuserId, t.month] })],
);

/**
 * A sub-user's traffic spike episodes (`subuser.traffic_spike`), with the action taken at their start, pending
 * until acknowledged. The id is the traffic store's, so a start recorded twice is one row.
 */
export const subuserTrafficSpikes = sqliteTable(
  "subuser_traffic_spikes",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    subuserId: text("subuser_id").notNull(),
    sensitivity: text("sensitivity", { enum: spikeSettings }).notNull(),
    startedAt: integer("started_at").notNull(),
    detectedAt: integer("detected_at").notNull(),
    endedAt: integer("ended_at"),
    /** The start's figures: observed and baseline rates, top domains and sources (JSON). */
    figures: text("figures", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** Totals and peak at the end (JSON). */
    outcome: text("outcome", { mode: "json" }).$type<Record<string, unknown>>(),
    action: text("action", { enum: spikeActions }).notNull(),
    acknowledgedAt: integer("acknowledged_at"),
    /** The account's notification (`subuser.traffic_spike`) that announces it (null: recorded before digests). */
    digestId: text("digest_id"),
    /** Acknowledged as normal: the level it taught its sub-user's baseline, and until when (null: none, or undone). */
    taught: text("taught", { mode: "json" }).$type<SpikeLesson>(),
  },
  (t) => [
    index("subuser_traffic_spikes_account").on(t.accountId, t.id),
    index("subuser_traffic_spikes_subuser").on(t.subuserId, t.id),
    index("subuser_traffic_spikes_digest").on(t.digestId),
  ],
);

/** What acknowledging an episode as normal taught: a rate per hour its sub-user's baseline is at least, until `until`. */
export interface SpikeLesson {
  bytesPerHour: number;
  requestsPerHour: number;
  until: number;
}

/**
 * The account's spike notifications: one `subuser.traffic_spike` per digest, naming every episode that joined it.
 * At most one digest per account waits (`notified_at` null) for its due time, one window after the last notified.
 */
export const trafficSpikeDigests = sqliteTable(
  "traffic_spike_digests",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    dueAt: integer("due_at").notNull(),
    notifiedAt: integer("notified_at"),
  },
  (t) => [
    uniqueIndex("traffic_spike_digests_waiting").on(t.accountId).where(sql`notified_at IS NULL`),
    index("traffic_spike_digests_account").on(t.accountId, t.notifiedAt),
    index("traffic_spike_digests_due").on(t.dueAt).where(sql`notified_at IS NULL`),
  ],
);

export type SubuserRow = typeof subusers.$inferSelect;
export type TrafficSpikeRow = typeof subuserTrafficSpikes.$inferSelect;
export type TrafficSpikeDigestRow = typeof trafficSpikeDigests.$inferSelect;
export type WhitelistEntryRow = typeof whitelistEntries.$inferSelect;

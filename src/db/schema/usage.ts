import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The last usage settlement each of an account's traffic stores (its shards: `accounts.traffic_shards`) handed to
 * D1 (`src/durable-objects/traffic-store/usage-meter.ts`): each store numbers its settlements, and one whose number
 * is not above this one was applied already, so applying it again changes nothing.
 */
export const usageSettlements = sqliteTable(
  "usage_settlements",
  {
    accountId: text("account_id").notNull(),
    shard: integer("shard").notNull().default(0),
    seq: integer("seq").notNull(),
    settledAt: integer("settled_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.shard] })],
);

/**
 * Sessions a key asked to end (`DELETE /{product}/sessions/{id}`), recorded with the audit entry in one D1 batch
 * before the session's gate is told: a crash between the two is finished by the cron (`finishTerminations`). Kept
 * a day, as long as a terminated session is shown, so a repeated DELETE records nothing twice.
 */
export const sessionTerminations = sqliteTable(
  "session_terminations",
  {
    sessionId: text("session_id").primaryKey(),
    accountId: text("account_id").notNull(),
    gateName: text("gate_name").notNull(),
    requestedAt: integer("requested_at").notNull(),
    /** Set once the gate has ended the session and the account's index has it. */
    doneAt: integer("done_at"),
  },
  (t) => [index("session_terminations_pending").on(t.doneAt, t.requestedAt)],
);

export type SessionTerminationRow = typeof sessionTerminations.$inferSelect;

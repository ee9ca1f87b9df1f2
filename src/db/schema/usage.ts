import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Usage batches the gateway posted, by its `batch_id`: a retry of the same batch is answered `duplicate: true`
 * with the first answer's counts, and nothing is enqueued twice. Kept 7 days.
 */
export const usageBatches = sqliteTable(
  "usage_batches",
  {
    id: text("id").primaryKey(),
    accepted: integer("accepted").notNull(),
    dropped: integer("dropped").notNull(),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [index("usage_batches_received").on(t.receivedAt)],
);

/**
 * Queue messages whose consumption (pools, monthly usage, thresholds) is applied: inserted in the same D1 batch as
 * the consumption, so a redelivered message changes nothing twice. Kept 7 days (the queue's redelivery horizon).
 */
export const usageApplied = sqliteTable(
  "usage_applied",
  {
    messageKey: text("message_key").primaryKey(),
    appliedAt: integer("applied_at").notNull(),
  },
  (t) => [index("usage_applied_at").on(t.appliedAt)],
);

/**
 * Each account's requests per minute as the usage consumer counted them (all products), written in the batch
 * that applies their messages, so never more than the account's traffic store counted. The usage route reads it
 * to leave out request-log candidates the store would not keep. Kept 1 hour (the store keeps its counts 2).
 */
export const usageMinuteRequests = sqliteTable(
  "usage_minute_requests",
  {
    accountId: text("account_id").notNull(),
    minute: integer("minute").notNull(),
    requests: integer("requests").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.minute] })],
);

import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Usage batches the gateway posted, by its `batch_id`: a retry of the same batch is answered `duplicate: true`
 * with the first answer's counts (`copies` counts the posts). Kept 7 days.
 */
export const usageBatches = sqliteTable(
  "usage_batches",
  {
    id: text("id").primaryKey(),
    accepted: integer("accepted").notNull(),
    dropped: integer("dropped").notNull(),
    receivedAt: integer("received_at").notNull(),
    copies: integer("copies").notNull().default(1),
  },
  (t) => [index("usage_batches_received").on(t.receivedAt)],
);

/**
 * The last usage settlement each account's traffic store handed to D1
 * (`src/durable-objects/traffic-store/usage-meter.ts`): settlements are numbered, and one whose number is not above
 * this one was applied already, so applying it again changes nothing.
 */
export const usageSettlements = sqliteTable("usage_settlements", {
  accountId: text("account_id").primaryKey(),
  seq: integer("seq").notNull(),
  settledAt: integer("settled_at").notNull(),
});

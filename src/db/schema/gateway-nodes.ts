import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * The gateway nodes' own credentials, issued and revoked by the operator (`/internal/admin/gateway-nodes`). A
 * credential names one node: every claim its holder makes on the node contract (leases, slots, sessions, the change
 * feed) is bound to that node. The token is shown once and kept as its SHA-256.
 */
export const gatewayNodeCredentials = sqliteTable(
  "gateway_node_credentials",
  {
    id: text("id").primaryKey(),
    /** The node's stable id, as it names itself on the contract (`node-1`). */
    node: text("node").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    /** The token's first characters, to tell credentials apart in a list. */
    tokenHint: text("token_hint").notNull(),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("gateway_node_credentials_live").on(t.node).where(sql`revoked_at IS NULL`)],
);

export type GatewayNodeCredentialRow = typeof gatewayNodeCredentials.$inferSelect;

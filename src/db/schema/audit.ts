import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { Product } from "../../vocabulary";

// ── The audit log (src/domain/audit) ─────────────────────────────────────────────────────────────────

/**
 * One row per change a key or an operator made, written in the same batch as the change. No foreign key to the
 * account: the log outlives nothing it records, and an insert pays no lookup.
 */
export const auditEvents = sqliteTable(
  "audit_events",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    /** The acting key; null = an operator through the admin API. */
    actorKeyId: text("actor_key_id"),
    /** The person who acted (signed in, or through a key they made); null: a key alone, or an operator. */
    actorMemberId: text("actor_member_id"),
    actorMemberEmail: text("actor_member_email"),
    /** The OAuth client the member acted through (an AI assistant on `/mcp`); null: a session or a key. */
    actorClientId: text("actor_client_id"),
    actorClientName: text("actor_client_name"),
    sourceIp: text("source_ip"),
    requestId: text("request_id").notNull(),
    action: text("action").notNull(),
    resourceType: text("resource_type").notNull(),
    resourceId: text("resource_id").notNull(),
    /** The products of the resource (a product-scoped key sees only its own); null = account-wide. */
    products: text("products", { mode: "json" }).$type<Product[]>(),
    changes: text("changes", { mode: "json" }).$type<Record<string, unknown>>(),
    previous: text("previous", { mode: "json" }).$type<Record<string, unknown>>(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    index("audit_events_account").on(t.accountId, t.id),
    index("audit_events_resource").on(t.accountId, t.resourceId, t.id),
    index("audit_events_actor").on(t.accountId, t.actorKeyId, t.id),
    index("audit_events_action").on(t.accountId, t.action, t.id),
  ],
);

export type AuditEventRow = typeof auditEvents.$inferSelect;

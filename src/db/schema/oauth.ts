import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { members } from "./members";

// ── OAuth grants for `/mcp` (src/domain/oauth) ─────────────────────────────────────────────────────

/**
 * A member's consent to an OAuth client (an AI assistant): the scopes granted, within the member's role. The
 * tokens themselves live hashed in the OAUTH_KV namespace (the OAuth library's storage); this row is what every
 * `/mcp` call checks, so a revocation stops the grant's tokens at once, not when KV's eventual consistency reaches
 * every location.
 */
export const oauthGrants = sqliteTable(
  "oauth_grants",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    memberId: text("member_id")
      .notNull()
      .references(() => members.id),
    clientId: text("client_id").notNull(),
    /** The client's name as it registered itself (unverified), and the host its redirect URI points at. */
    clientName: text("client_name").notNull(),
    redirectHost: text("redirect_host").notNull(),
    /** The OAuth scopes granted (`area:access`). */
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** The library's id of the grant in OAUTH_KV (its tokens are deleted with it at revocation). */
    providerGrantId: text("provider_grant_id"),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("oauth_grants_member").on(t.memberId, t.id), index("oauth_grants_account").on(t.accountId, t.id)],
);

export type OAuthGrantRow = typeof oauthGrants.$inferSelect;

import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { type MemberRole, memberRoles } from "../../vocabulary";
import { accounts } from "./accounts";

// ── The account's people (src/domain/members) ────────────────────────────────────────────────────────

/**
 * A person of an account: signs in with email and password (+ TOTP), acts with the scopes of a role. The email is
 * stored lower-case and unique among the account's present members; a removed member keeps its row (the audit log
 * and the keys it made name it), its address free for a new invitation.
 */
export const members = sqliteTable(
  "members",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    name: text("name").notNull(),
    role: text("role", { enum: memberRoles }).$type<MemberRole>().notNull(),
    /** `pbkdf2-sha256$<iterations>$p<pepper version>$<salt>$<key>` (src/platform/passwords.ts). */
    passwordHash: text("password_hash").notNull(),
    mfaEnabled: integer("mfa_enabled", { mode: "boolean" }).notNull().default(false),
    mfaSecretSealed: text("mfa_secret_sealed"),
    mfaPendingSecretSealed: text("mfa_pending_secret_sealed"),
    mfaLastStep: integer("mfa_last_step"),
    lastSignInAt: integer("last_sign_in_at"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    removedAt: integer("removed_at"),
  },
  (t) => [
    uniqueIndex("members_account_email").on(t.accountId, t.email).where(sql`removed_at IS NULL`),
    index("members_email").on(t.email),
    index("members_account").on(t.accountId, t.id),
  ],
);

export const memberRecoveryCodes = sqliteTable(
  "member_recovery_codes",
  {
    memberId: text("member_id")
      .notNull()
      .references(() => members.id),
    codeHash: text("code_hash").notNull(),
    pending: integer("pending", { mode: "boolean" }).notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [primaryKey({ columns: [t.memberId, t.codeHash] })],
);

/**
 * A signed-in browser: the cookie holds a random token, stored as SHA-256 (its CSRF token is an HMAC of it, stored
 * nowhere). It ends at
 * `expires_at` (absolute), after the idle timeout without a request, at sign-out, or when revoked.
 */
export const memberSessions = sqliteTable(
  "member_sessions",
  {
    id: text("id").primaryKey(),
    memberId: text("member_id")
      .notNull()
      .references(() => members.id),
    accountId: text("account_id").notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    revokedAt: integer("revoked_at"),
    ip: text("ip"),
    userAgent: text("user_agent"),
  },
  (t) => [index("member_sessions_member").on(t.memberId, t.id)],
);

/** An invitation by email: one use, valid 24 hours, its token stored as SHA-256. */
export const invitations = sqliteTable(
  "invitations",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id")
      .notNull()
      .references(() => accounts.id),
    email: text("email").notNull(),
    role: text("role", { enum: memberRoles }).$type<MemberRole>().notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    /** The member or key that invited (`mem_…`, `key_…`), or null for an operator. */
    invitedBy: text("invited_by"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    acceptedAt: integer("accepted_at"),
    memberId: text("member_id"),
    revokedAt: integer("revoked_at"),
  },
  (t) => [index("invitations_account").on(t.accountId, t.id)],
);

/** A password reset sent by email: one use, short validity, its token stored as SHA-256. */
export const passwordResets = sqliteTable("password_resets", {
  id: text("id").primaryKey(),
  memberId: text("member_id")
    .notNull()
    .references(() => members.id),
  tokenHash: text("token_hash").notNull().unique(),
  createdAt: integer("created_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
});

/** Mail the worker would send, kept where `MAIL_OUTBOX` is "on" (local development and tests) instead of sent. */
export const mailOutbox = sqliteTable("mail_outbox", {
  id: text("id").primaryKey(),
  to: text("to").notNull(),
  subject: text("subject").notNull(),
  text: text("text").notNull(),
  createdAt: integer("created_at").notNull(),
});

export type MemberRow = typeof members.$inferSelect;
export type MemberSessionRow = typeof memberSessions.$inferSelect;
export type InvitationRow = typeof invitations.$inferSelect;

/**
 * A member's passkey (a WebAuthn credential, discoverable, user-verified): signs the member in without a password
 * or TOTP code. The public key is stored as the authenticator gave it (COSE, base64url); the counter is the last one
 * seen (a clone that replays an older one is refused).
 */
export const memberPasskeys = sqliteTable(
  "member_passkeys",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    memberId: text("member_id")
      .notNull()
      .references(() => members.id),
    name: text("name").notNull(),
    credentialId: text("credential_id").notNull().unique(),
    publicKey: text("public_key").notNull(),
    signCount: integer("sign_count").notNull(),
    /** JSON array of the transports the authenticator named (`internal`, `hybrid`, `usb`, …). */
    transports: text("transports").notNull(),
    /** Synced to other devices by its provider (a multi-device passkey), as the authenticator said. */
    backedUp: integer("backed_up", { mode: "boolean" }).notNull(),
    createdAt: integer("created_at").notNull(),
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("member_passkeys_member").on(t.memberId, t.id)],
);

/**
 * A WebAuthn challenge the API handed out: one use (deleted as it is checked), valid five minutes. A registration's
 * is bound to the member adding a passkey; a sign-in's to nobody (the passkey names its member).
 */
export const passkeyChallenges = sqliteTable("passkey_challenges", {
  challenge: text("challenge").primaryKey(),
  purpose: text("purpose", { enum: ["register", "sign_in"] }).notNull(),
  memberId: text("member_id"),
  expiresAt: integer("expires_at").notNull(),
});

export type MemberPasskeyRow = typeof memberPasskeys.$inferSelect;

import { z } from "@hono/zod-openapi";
import type { InvitationRow, MemberRow, MemberSessionRow } from "../db/schema";
import { invitationStatus } from "../domain/members/invitations";
import type { NewSession } from "../domain/members/sessions";
import { toIso } from "../platform/clock";
import { email, id, idParam, ipText, text, timestamp, token } from "../platform/fields";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../platform/passwords";
import { memberRoles, roleScopes } from "../vocabulary";
import { keyScopesSchema } from "./api-key";

export const memberRoleSchema = z.enum(memberRoles).openapi("MemberRole", {
  description:
    "`owner`: everything. `admin`: everything but money (billing read only) and the account's owners and admins. " +
    "`billing`: orders, balances, budget, subscriptions, the account's profile read. `developer`: sub-users, " +
    "traffic, and the API keys it made. `viewer`: every area, read only.",
  example: "developer",
});

export const memberIdParam = z.object({ id: idParam("member") });
export const invitationIdParam = z.object({ id: idParam("invitation") });
export const sessionIdParam = z.object({ id: idParam("memberSession") });

/** A password as a person chooses it: 10-200 characters, any but control characters. */
export const passwordSchema = text(PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH).openapi({
  description: `${PASSWORD_MIN_LENGTH}-${PASSWORD_MAX_LENGTH} characters; never shown or logged, stored as a peppered PBKDF2 hash.`,
  example: "correct horse battery staple",
});

/** A link's token, from the mailed link (43 base62 characters). */
export const linkTokenSchema = token(/^[0-9A-Za-z]{1,64}$/, 64).openapi({
  description: "The token of the mailed link (the `token` in its address).",
  example: "3kT9xZq0pW7mL2nB8vC4dF6gH1jK5sA0eR3tY7uI9oP",
});

export const memberSchema = z
  .object({
    id: id("member"),
    email: email(),
    name: text(100),
    role: memberRoleSchema,
    scopes: keyScopesSchema
      .nullable()
      .openapi({ description: "What the role may do, as key scopes; null = everything (an owner)." }),
    mfa_enabled: z.boolean(),
    last_sign_in_at: timestamp().nullable(),
    created_at: timestamp(),
  })
  .openapi("Member");

export function presentMember(row: MemberRow): z.infer<typeof memberSchema> {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    scopes: roleScopes[row.role],
    mfa_enabled: row.mfaEnabled,
    last_sign_in_at: row.lastSignInAt === null ? null : toIso(row.lastSignInAt),
    created_at: toIso(row.createdAt),
  };
}

export const memberChangesSchema = z
  .strictObject({ role: memberRoleSchema.optional(), name: text(100, 1).optional() })
  .openapi("MemberChanges", { example: { role: "viewer" } });

export const invitationSchema = z
  .object({
    id: id("invitation"),
    email: email(),
    role: memberRoleSchema,
    status: z.enum(["pending", "accepted", "revoked", "expired"]),
    expires_at: timestamp(),
    member_id: id("member").nullable().openapi({ description: "The member it made, once accepted." }),
    created_at: timestamp(),
  })
  .openapi("Invitation");

export function presentInvitation(row: InvitationRow): z.infer<typeof invitationSchema> {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: invitationStatus(row),
    expires_at: toIso(row.expiresAt),
    member_id: row.memberId,
    created_at: toIso(row.createdAt),
  };
}

export const sessionSchema = z
  .object({
    id: id("memberSession"),
    created_at: timestamp(),
    last_seen_at: timestamp().openapi({ description: "Moved at most once a minute." }),
    expires_at: timestamp().openapi({ description: "The absolute end; an idle hour ends it sooner." }),
    ip: ipText().nullable(),
    user_agent: text(200).nullable(),
    current: z.boolean().openapi({ description: "The session this request came through." }),
  })
  .openapi("MemberSession");

export function presentSession(row: MemberSessionRow, currentId: string | null): z.infer<typeof sessionSchema> {
  return {
    id: row.id,
    created_at: toIso(row.createdAt),
    last_seen_at: toIso(row.lastSeenAt),
    expires_at: toIso(row.expiresAt),
    ip: row.ip,
    user_agent: row.userAgent,
    current: row.id === currentId,
  };
}

export const csrfTokenSchema = token(/^[A-Za-z0-9_-]{43}$/, 43).openapi({
  description: "Send it in `X-CSRF-Token` on every change made with the session cookie.",
  example: "Jx3k9ZqP0w7mL2nB8vC4dF6gH1jK5sA0eR3tY7uI9oP",
});

export const signedInSchema = z
  .object({ session: sessionSchema, member: memberSchema, csrf_token: csrfTokenSchema })
  .openapi("SignedIn");

export function presentSignedIn(signed: NewSession): z.infer<typeof signedInSchema> {
  return {
    session: presentSession(signed.session, signed.session.id),
    member: presentMember(signed.member),
    csrf_token: signed.csrfToken,
  };
}

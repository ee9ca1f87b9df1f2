import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { type InvitationRow, invitations, type MemberRow, members, passwordResets } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { HOUR, now, toIso } from "../../platform/clock";
import { randomString, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { logError } from "../../platform/logger";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import type { MemberRole } from "../../vocabulary";
import { auditStatements, withdrawnEntry } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { type Mail, sendMail } from "../mail/mailer";
import { commit } from "../unit-of-work";
import {
  assertMayGrant,
  endSessions,
  insertMemberWhere,
  memberActor,
  memberFields,
  membersWithEmail,
  newMemberRow,
  newPasswordHash,
  normalizeEmail,
  syncMemberGuard,
  withUniqueMember,
} from "./members";
import { RESET_ADDRESS_LIMITS, throttle } from "./sessions";

/** An invitation's link works once, for 24 hours; a password reset's once, for 1 hour. */
export const INVITATION_TTL_MS = 24 * HOUR;
export const PASSWORD_RESET_TTL_MS = 1 * HOUR;
/** Links' tokens: 43 base62 characters (~256 bits), stored as SHA-256. */
const LINK_TOKEN = /^[0-9A-Za-z]{43}$/;

export type InvitationStatus = "pending" | "accepted" | "revoked" | "expired";

export function invitationStatus(row: InvitationRow, at = now()): InvitationStatus {
  if (row.acceptedAt !== null) return "accepted";
  if (row.revokedAt !== null) return "revoked";
  return row.expiresAt <= at ? "expired" : "pending";
}

/** Where a mailed link leads: the console's page for it, on the API's public origin. */
function consoleLink(ctx: DomainContext, page: string, token: string): string {
  return `${ctx.env.API_ORIGIN}/console/#/${page}?token=${token}`;
}

/**
 * Invites a person by email to a role (never above the caller's own: `assertMayGrant`). One pending invitation per
 * address, none for a present member (409 `member_exists`, decided in the insert itself). The link is mailed; its
 * token is stored hashed and shown nowhere else.
 */
export async function createInvitation(
  ctx: DomainContext,
  principal: Principal,
  input: { email: string; role: MemberRole },
): Promise<InvitationRow> {
  assertMayGrant(principal, input.role);
  const email = normalizeEmail(input.email);
  const at = now();
  const token = randomString(43);
  const row: InvitationRow = {
    id: newId("invitation", at),
    accountId: principal.accountId,
    email,
    role: input.role,
    tokenHash: await sha256Hex(token),
    invitedBy: principal.member?.id ?? principal.keyId,
    createdAt: at,
    expiresAt: at + INVITATION_TTL_MS,
    acceptedAt: null,
    memberId: null,
    revokedAt: null,
  };
  const free = sql`NOT EXISTS (SELECT 1 FROM ${members} WHERE ${members.accountId} = ${row.accountId}
      AND ${members.email} = ${email} AND ${members.removedAt} IS NULL)
    AND NOT EXISTS (SELECT 1 FROM ${invitations} WHERE ${invitations.accountId} = ${row.accountId}
      AND ${invitations.email} = ${email} AND ${invitations.acceptedAt} IS NULL AND ${invitations.revokedAt} IS NULL
      AND ${invitations.expiresAt} > ${at})`;
  const insert = insertWhere(ctx.db, invitations, row, free).returning({ id: invitations.id });
  const entryId = newId("auditEvent", at);
  const committed = await commit(ctx, [
    insert,
    ...auditStatements(ctx, {
      id: entryId,
      action: "invitation.created",
      accountId: row.accountId,
      resourceId: row.id,
      after: { email, role: row.role, expiresAt: row.expiresAt },
      ifChanged: true,
    }),
  ]);
  if (committed.of(insert).length === 0) throw new ApiError("member_exists");
  await sendOrWithdraw(ctx, row, entryId, {
    to: email,
    subject: "You are invited to a proxy account",
    text: [
      `You are invited to join a proxy account as ${row.role}.`,
      "",
      `Accept, choose your name and password here (the link works once, until ${toIso(row.expiresAt)}):`,
      consoleLink(ctx, "accept-invitation", token),
      "",
      "If you did not expect this, ignore this mail.",
    ].join("\n"),
  });
  return row;
}

/**
 * Mails an invitation, or, when the mail cannot go, withdraws it with its audit entry (a link nobody got) and
 * answers 502 `mail_failed`.
 */
async function sendOrWithdraw(ctx: DomainContext, row: InvitationRow, entryId: string, mail: Mail): Promise<void> {
  try {
    await sendMail(ctx, mail);
  } catch (error) {
    logError("invitation_mail_failed", { invitation: row.id }, error);
    await commit(ctx, [ctx.db.delete(invitations).where(eq(invitations.id, row.id)), withdrawnEntry(ctx, entryId)]);
    throw new ApiError("mail_failed", "The invitation could not be mailed, so it was not made: check the address.");
  }
}

export function listInvitations(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const page = keysetPage(invitations.id, query);
  return ctx.db
    .select()
    .from(invitations)
    .where(and(eq(invitations.accountId, principal.accountId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/** Revokes a pending invitation (its link stops working); one that is not pending is left as it is. */
export async function revokeInvitation(ctx: DomainContext, principal: Principal, id: string): Promise<InvitationRow> {
  const row = isId("invitation", id)
    ? await ctx.db
        .select()
        .from(invitations)
        .where(and(eq(invitations.id, id), eq(invitations.accountId, principal.accountId)))
        .get()
    : undefined;
  if (!row) throw new ApiError("invitation_not_found");
  assertMayGrant(principal, row.role);
  const at = now();
  const revocation = ctx.db
    .update(invitations)
    .set({ revokedAt: at })
    .where(and(eq(invitations.id, id), isNull(invitations.acceptedAt), isNull(invitations.revokedAt)))
    .returning();
  const committed = await commit(ctx, [
    revocation,
    ...auditStatements(ctx, {
      action: "invitation.revoked",
      accountId: row.accountId,
      resourceId: id,
      before: row,
      after: { revokedAt: at },
      ifChanged: true,
    }),
  ]);
  return committed.of(revocation)[0] ?? row;
}

/**
 * Accepts an invitation: the person becomes a member with the invited role, the name and password given. The link
 * is consumed in the same batch as the member is added, so it works once; an expired, revoked or unknown one is
 * 410 `link_expired`.
 */
export async function acceptInvitation(
  ctx: DomainContext,
  input: { token: string; name: string; password: string },
  meta: { ip: string | null; requestId: string },
): Promise<MemberRow> {
  const invitation = LINK_TOKEN.test(input.token)
    ? await ctx.db
        .select()
        .from(invitations)
        .where(eq(invitations.tokenHash, await sha256Hex(input.token)))
        .get()
    : undefined;
  if (!invitation || invitationStatus(invitation) !== "pending") throw new ApiError("link_expired");
  const member = await newMemberRow(ctx, invitation.accountId, { ...invitation, ...input });
  const actor = memberActor(member, { keyId: null, sourceIp: meta.ip, requestId: meta.requestId });
  const actingCtx = { ...ctx, actor };
  const consume = ctx.db
    .update(invitations)
    .set({ acceptedAt: member.createdAt, memberId: member.id })
    .where(
      and(
        eq(invitations.id, invitation.id),
        isNull(invitations.acceptedAt),
        isNull(invitations.revokedAt),
        gt(invitations.expiresAt, member.createdAt),
      ),
    );
  const insert = insertMemberWhere(actingCtx, member, sql`changes() > 0`);
  const committed = await withUniqueMember(() =>
    commit(actingCtx, [
      consume,
      insert,
      ...auditStatements(actingCtx, {
        action: "invitation.accepted",
        accountId: member.accountId,
        resourceId: invitation.id,
        after: { memberId: member.id },
        ifChanged: true,
      }),
      ...auditStatements(actingCtx, {
        action: "member.created",
        accountId: member.accountId,
        resourceId: member.id,
        after: memberFields(member),
        ifChanged: true,
      }),
    ]),
  );
  if (committed.of(insert).length === 0) throw new ApiError("link_expired");
  return member;
}

// ── Password reset by email ────────────────────────────────────────────────────────────────────────

/**
 * Mails a reset link to each present member with this address (of one account when given). Says nothing of
 * whether there is one: the caller's answer is the same either way. Throttled per address (3 a minute, 20 a day),
 * member or not.
 */
export async function requestPasswordReset(ctx: DomainContext, input: { email: string; account?: string }) {
  const email = normalizeEmail(input.email);
  await throttle(ctx, `password-reset:${await sha256Hex(email)}`, RESET_ADDRESS_LIMITS);
  const found = await membersWithEmail(ctx, email, input.account, 10);
  for (const member of found) {
    const at = now();
    const token = randomString(43);
    await ctx.db.insert(passwordResets).values({
      id: newId("passwordReset", at),
      memberId: member.id,
      tokenHash: await sha256Hex(token),
      createdAt: at,
      expiresAt: at + PASSWORD_RESET_TTL_MS,
      usedAt: null,
    });
    // Whether a mail went says whether a member has the address: a failure is logged, never told.
    await sendMail(ctx, {
      to: email,
      subject: "Reset your password",
      text: [
        `Someone asked to reset the password of ${email} (member ${member.id}, account ${member.accountId}).`,
        "",
        `Choose a new password here (the link works once, until ${toIso(at + PASSWORD_RESET_TTL_MS)}):`,
        consoleLink(ctx, "reset-password", token),
        "",
        "If it was not you, ignore this mail: your password stays as it is.",
      ].join("\n"),
    }).catch((error) => logError("password_reset_mail_failed", { member: member.id }, error));
  }
}

/**
 * Sets a new password with a reset link's token, once: the link is consumed in the same batch, every session of the
 * member ends, and other links of the member stop working. An unknown, used or expired token is 410 `link_expired`.
 */
export async function completePasswordReset(
  ctx: DomainContext,
  input: { token: string; password: string },
  meta: { ip: string | null; requestId: string },
): Promise<void> {
  const reset = LINK_TOKEN.test(input.token)
    ? await ctx.db
        .select({ id: passwordResets.id, memberId: passwordResets.memberId, expiresAt: passwordResets.expiresAt })
        .from(passwordResets)
        .where(and(eq(passwordResets.tokenHash, await sha256Hex(input.token)), isNull(passwordResets.usedAt)))
        .get()
    : undefined;
  const at = now();
  if (!reset || reset.expiresAt <= at) throw new ApiError("link_expired");
  const member = await ctx.db
    .select()
    .from(members)
    .where(and(eq(members.id, reset.memberId), isNull(members.removedAt)))
    .get();
  if (!member) throw new ApiError("link_expired");
  const actingCtx = {
    ...ctx,
    actor: memberActor(member, { keyId: null, sourceIp: meta.ip, requestId: meta.requestId }),
  };
  const consume = ctx.db
    .update(passwordResets)
    .set({ usedAt: at })
    .where(and(eq(passwordResets.memberId, member.id), isNull(passwordResets.usedAt)))
    .returning({ id: passwordResets.id });
  const passwordHash = await newPasswordHash(ctx.env, input.password);
  // Only when this very link was still unused (a concurrent use of it consumed it first: nothing changes).
  const thisLinkUsed = sql`EXISTS (SELECT 1 FROM ${passwordResets} WHERE ${passwordResets.id} = ${reset.id}
    AND ${passwordResets.usedAt} = ${at})`;
  const committed = await commit(actingCtx, [
    consume,
    ctx.db
      .update(members)
      .set({ passwordHash, updatedAt: at })
      .where(and(eq(members.id, member.id), thisLinkUsed)),
    ...auditStatements(actingCtx, {
      action: "member.password_reset",
      accountId: member.accountId,
      resourceId: member.id,
      after: { passwordHash },
      ifChanged: true,
    }),
    endSessions(ctx, member.id, at, { when: thisLinkUsed }),
  ]);
  if (!committed.of(consume).some((row) => row.id === reset.id)) throw new ApiError("link_expired");
  // Its sessions ended: refused from their next request.
  await syncMemberGuard(ctx, member.id);
}

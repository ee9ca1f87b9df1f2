import { and, eq, isNull, lt, or } from "drizzle-orm";
import { type AccountRow, type MemberRow, memberRecoveryCodes, members } from "../../db/schema";
import { now } from "../../platform/clock";
import { seal, unseal } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { assertMfa, consumeFactorCode, type Enrollment, matchingStep, newTotpFactor } from "../accounts/mfa";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { commit } from "../unit-of-work";

/**
 * A member's own second factor: TOTP as the account's (the same secret format, recovery codes, one use per time
 * step), kept on the member. It is asked at sign-in and for the gated actions a member takes.
 */

async function memberOf(ctx: DomainContext, principal: Principal): Promise<MemberRow> {
  const id = principal.member?.id;
  const member = id ? await ctx.db.select().from(members).where(eq(members.id, id)).get() : undefined;
  if (!member) throw new ApiError("session_required");
  return member;
}

/**
 * The second factor of a gated action (`X-MFA-Code`), whoever calls: a key answers with the account's factor; a
 * member with its own. A member without one, on an account with MFA, is refused until it enrolls its own: the
 * account's factor is not the member's to use.
 */
export async function assertCallerMfa(
  ctx: DomainContext,
  principal: Principal,
  account: AccountRow,
  code: string | undefined,
) {
  if (!principal.member) return assertMfa(ctx, account, code);
  const member = await memberOf(ctx, principal);
  if (!member.mfaEnabled) {
    if (account.mfaEnabled) {
      throw new ApiError("mfa_required", "The account requires MFA: enroll your own with POST /v1/auth/mfa first.");
    }
    return;
  }
  await assertMemberCode(ctx, member, code);
}

/** The member's own code, required and consumed (403 `mfa_required` without a valid one). */
async function assertMemberCode(ctx: DomainContext, member: MemberRow, code: string | undefined): Promise<void> {
  if (!code) throw new ApiError("mfa_required", "This action requires an MFA code in the X-MFA-Code header.");
  if (!(await consumeMemberMfaCode(ctx, member, code))) {
    throw new ApiError("mfa_required", "The MFA code is invalid or was already used.");
  }
}

/** Starts the calling member's TOTP enrollment (re-enrolling with MFA on needs a current code). */
export async function enrollMemberTotp(
  ctx: DomainContext,
  principal: Principal,
  code: string | undefined,
): Promise<Enrollment> {
  const member = await memberOf(ctx, principal);
  if (member.mfaEnabled) await assertMemberCode(ctx, member, code);
  const { secret, enrollment, hashes } = await newTotpFactor(member.email);
  const sealed = await seal(secret, ctx.env.SEALING_KEY);
  await commit(ctx, [
    ctx.db.update(members).set({ mfaPendingSecretSealed: sealed, updatedAt: now() }).where(eq(members.id, member.id)),
    ...auditStatements(ctx, {
      action: "member.mfa_enrollment_started",
      accountId: member.accountId,
      resourceId: member.id,
      after: { mfaPendingSecretSealed: sealed },
    }),
    ctx.db
      .delete(memberRecoveryCodes)
      .where(and(eq(memberRecoveryCodes.memberId, member.id), eq(memberRecoveryCodes.pending, true))),
    ctx.db
      .insert(memberRecoveryCodes)
      .values(hashes.map((codeHash) => ({ memberId: member.id, codeHash, pending: true }))),
  ]);
  return enrollment;
}

/** Confirms the pending enrollment with a first code: the member's MFA is on from then. */
export async function verifyMemberEnrollment(ctx: DomainContext, principal: Principal, code: string): Promise<void> {
  const member = await memberOf(ctx, principal);
  if (!member.mfaPendingSecretSealed) {
    throw new ApiError("invalid_request", "No MFA enrollment is pending: POST /v1/auth/mfa first.");
  }
  const secret = await unseal(member.mfaPendingSecretSealed, ctx.env.SEALING_KEY);
  const step = matchingStep(secret, member.email, code);
  if (step === null) throw new ApiError("mfa_required", "The code does not match the pending enrollment.");
  await commit(ctx, [
    ctx.db
      .update(members)
      .set({
        mfaEnabled: true,
        mfaSecretSealed: member.mfaPendingSecretSealed,
        mfaPendingSecretSealed: null,
        mfaLastStep: step,
        updatedAt: now(),
      })
      .where(eq(members.id, member.id)),
    ...auditStatements(ctx, {
      action: "member.mfa_enabled",
      accountId: member.accountId,
      resourceId: member.id,
      after: { mfaEnabled: true },
    }),
    ctx.db
      .delete(memberRecoveryCodes)
      .where(and(eq(memberRecoveryCodes.memberId, member.id), eq(memberRecoveryCodes.pending, false))),
    ctx.db.update(memberRecoveryCodes).set({ pending: false }).where(eq(memberRecoveryCodes.memberId, member.id)),
  ]);
}

/** Turns the calling member's MFA off (a gated action itself). */
export async function disableMemberMfa(ctx: DomainContext, principal: Principal, code: string | undefined) {
  const member = await memberOf(ctx, principal);
  await assertMemberCode(ctx, member, code);
  await commit(ctx, [
    ctx.db
      .update(members)
      .set({ mfaEnabled: false, mfaSecretSealed: null, mfaPendingSecretSealed: null, mfaLastStep: null })
      .where(eq(members.id, member.id)),
    ...auditStatements(ctx, {
      action: "member.mfa_disabled",
      accountId: member.accountId,
      resourceId: member.id,
      after: { mfaEnabled: false },
    }),
    ctx.db.delete(memberRecoveryCodes).where(eq(memberRecoveryCodes.memberId, member.id)),
  ]);
}

/** Checks and consumes a member's code: a TOTP code once per time step, or an unused recovery code. */
export function consumeMemberMfaCode(ctx: DomainContext, member: MemberRow, code: string): Promise<boolean> {
  return consumeFactorCode(ctx, member, code, {
    claimStep: async (step) =>
      (
        await ctx.db
          .update(members)
          .set({ mfaLastStep: step })
          .where(and(eq(members.id, member.id), or(isNull(members.mfaLastStep), lt(members.mfaLastStep, step))))
          .returning({ id: members.id })
      ).length === 1,
    claimRecoveryCode: async (codeHash) =>
      (
        await ctx.db
          .update(memberRecoveryCodes)
          .set({ usedAt: now() })
          .where(
            and(
              eq(memberRecoveryCodes.memberId, member.id),
              eq(memberRecoveryCodes.codeHash, codeHash),
              eq(memberRecoveryCodes.pending, false),
              isNull(memberRecoveryCodes.usedAt),
            ),
          )
          .returning({ memberId: memberRecoveryCodes.memberId })
      ).length === 1,
  });
}

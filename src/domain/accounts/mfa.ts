import { and, eq, isNull, lt, or } from "drizzle-orm";
import * as OTPAuth from "otpauth";
import { type AccountRow, accounts, mfaRecoveryCodes } from "../../db/schema";
import { now } from "../../platform/clock";
import { randomString, seal, sha256Hex, unseal } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import type { DomainContext } from "../context";
import { commit } from "../unit-of-work";
import { recordedAccountUpdate } from "./account-writes";

const ISSUER = "Proxy Account API";
const PERIOD_SECONDS = 30;
/** Codes one time step early or late are accepted (clock drift). */
const DRIFT_STEPS = 1;
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

export interface Enrollment {
  method: "totp";
  secret: string;
  otpauthUri: string;
  recoveryCodes: string[];
}

/**
 * The MFA gate of gated actions: when the account has MFA enabled, the request must carry a current TOTP code
 * (or an unused recovery code); otherwise 403 `mfa_required`. The code is consumed.
 */
export async function assertMfa(ctx: DomainContext, account: AccountRow, code: string | undefined): Promise<void> {
  if (!account.mfaEnabled) return;
  if (!code) throw new ApiError("mfa_required", "This action requires an MFA code in the X-MFA-Code header.");
  if (!(await consumeMfaCode(ctx, account, code))) {
    throw new ApiError("mfa_required", "The MFA code is invalid or was already used.");
  }
}

function totpFor(secretBase32: string, label: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer: ISSUER,
    label,
    algorithm: "SHA1",
    digits: 6,
    period: PERIOD_SECONDS,
    secret: OTPAuth.Secret.fromBase32(secretBase32),
  });
}

/**
 * Starts a TOTP enrollment: a new secret and recovery codes, both pending until the
 * first valid code is verified. An enabled factor stays in force until then.
 */
export async function enrollTotp(
  ctx: DomainContext,
  account: AccountRow,
  mfaCode: string | undefined,
): Promise<Enrollment> {
  const { db } = ctx;
  await assertMfa(ctx, account, mfaCode);
  const { secret, enrollment, hashes } = await newTotpFactor(account.email);
  await commit(ctx, [
    ...recordedAccountUpdate(ctx, account, "account.mfa_enrollment_started", {
      mfaPendingSecretSealed: await seal(secret, ctx.env.SEALING_KEY),
      updatedAt: now(),
    }),
    db
      .delete(mfaRecoveryCodes)
      .where(and(eq(mfaRecoveryCodes.accountId, account.id), eq(mfaRecoveryCodes.pending, true))),
    db.insert(mfaRecoveryCodes).values(hashes.map((codeHash) => ({ accountId: account.id, codeHash, pending: true }))),
  ]);
  return enrollment;
}

/**
 * A new TOTP factor for `label` (an account's or a member's email): its secret, the enrollment shown once, and the
 * recovery codes' hashes to store. Shared by the account's MFA and members' own.
 */
export async function newTotpFactor(
  label: string,
): Promise<{ secret: string; enrollment: Enrollment; hashes: string[] }> {
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const raw = randomString(10, RECOVERY_ALPHABET);
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
  const hashes = await Promise.all(codes.map(sha256Hex));
  const enrollment: Enrollment = {
    method: "totp",
    secret,
    otpauthUri: totpFor(secret, label).toString(),
    recoveryCodes: codes,
  };
  return { secret, enrollment, hashes };
}

/** The SHA-256 a recovery code is stored as (codes are case-insensitive). */
export function recoveryCodeHash(code: string): Promise<string> {
  return sha256Hex(code.trim().toLowerCase());
}

/** A TOTP code's shape: six digits (anything else is tried as a recovery code). */
export function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code.trim());
}

/** Confirms a pending enrollment with a code from the authenticator: MFA is then enabled. */
export async function verifyEnrollment(ctx: DomainContext, account: AccountRow, code: string): Promise<void> {
  const { db } = ctx;
  if (!account.mfaPendingSecretSealed) {
    throw new ApiError("invalid_request", "No MFA enrollment is pending: POST /v1/users/me/security/mfa first.");
  }
  const secret = await unseal(account.mfaPendingSecretSealed, ctx.env.SEALING_KEY);
  const step = matchingStep(secret, account.email, code);
  if (step === null) throw new ApiError("mfa_required", "The code does not match the pending enrollment.");
  await commit(ctx, [
    ...recordedAccountUpdate(ctx, account, "account.mfa_enabled", {
      mfaEnabled: true,
      mfaSecretSealed: account.mfaPendingSecretSealed,
      mfaPendingSecretSealed: null,
      mfaLastStep: step,
      updatedAt: now(),
    }),
    db
      .delete(mfaRecoveryCodes)
      .where(and(eq(mfaRecoveryCodes.accountId, account.id), eq(mfaRecoveryCodes.pending, false))),
    db.update(mfaRecoveryCodes).set({ pending: false }).where(eq(mfaRecoveryCodes.accountId, account.id)),
  ]);
}

/** Turns MFA off and deletes the recovery codes: a gated action itself. */
export async function disableMfa(ctx: DomainContext, account: AccountRow, mfaCode: string | undefined): Promise<void> {
  await assertMfa(ctx, account, mfaCode);
  await commit(ctx, [
    ...recordedAccountUpdate(ctx, account, "account.mfa_disabled", {
      mfaEnabled: false,
      mfaSecretSealed: null,
      mfaPendingSecretSealed: null,
      mfaLastStep: null,
      updatedAt: now(),
    }),
    ctx.db.delete(mfaRecoveryCodes).where(eq(mfaRecoveryCodes.accountId, account.id)),
  ]);
}

/**
 * Checks a second factor: a current TOTP code (each accepted once) or an unused recovery code.
 * Both are consumed with a conditional UPDATE, so two concurrent uses of one code cannot both pass.
 */
export async function consumeMfaCode(ctx: DomainContext, account: AccountRow, code: string): Promise<boolean> {
  const { db } = ctx;
  return consumeFactorCode(ctx, account, code, {
    claimStep: async (step) =>
      (
        await db
          .update(accounts)
          .set({ mfaLastStep: step })
          .where(and(eq(accounts.id, account.id), or(isNull(accounts.mfaLastStep), lt(accounts.mfaLastStep, step))))
          .returning({ id: accounts.id })
      ).length === 1,
    claimRecoveryCode: async (codeHash) =>
      (
        await db
          .update(mfaRecoveryCodes)
          .set({ usedAt: now() })
          .where(
            and(
              eq(mfaRecoveryCodes.accountId, account.id),
              eq(mfaRecoveryCodes.codeHash, codeHash),
              eq(mfaRecoveryCodes.pending, false),
              isNull(mfaRecoveryCodes.usedAt),
            ),
          )
          .returning({ accountId: mfaRecoveryCodes.accountId })
      ).length === 1,
  });
}

/**
 * The one check of a second factor, the account's or a member's: a six-digit code is a TOTP code of the sealed
 * secret (its time step claimed once by `claimStep`), anything else a recovery code (its hash claimed once by
 * `claimRecoveryCode`). The claims are the owner's conditional UPDATEs.
 */
export async function consumeFactorCode(
  ctx: DomainContext,
  factor: { mfaEnabled: boolean; mfaSecretSealed: string | null; email: string },
  code: string,
  claims: { claimStep: (step: number) => Promise<boolean>; claimRecoveryCode: (hash: string) => Promise<boolean> },
): Promise<boolean> {
  if (!factor.mfaEnabled || !factor.mfaSecretSealed) return false;
  const trimmed = code.trim();
  if (!isTotpCode(trimmed)) return claims.claimRecoveryCode(await recoveryCodeHash(trimmed));
  const step = matchingStep(await unseal(factor.mfaSecretSealed, ctx.env.SEALING_KEY), factor.email, trimmed);
  return step !== null && claims.claimStep(step);
}

/** The time step a code belongs to (within the allowed drift), or null. */
export function matchingStep(secret: string, label: string, code: string): number | null {
  const timestamp = now();
  const delta = totpFor(secret, label).validate({ token: code.trim(), timestamp, window: DRIFT_STEPS });
  if (delta === null) return null;
  return Math.floor(timestamp / 1000 / PERIOD_SECONDS) + delta;
}

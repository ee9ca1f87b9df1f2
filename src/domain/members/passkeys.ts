import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from "@simplewebauthn/server";
import { and, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { type MemberPasskeyRow, type MemberRow, memberPasskeys, members, passkeyChallenges } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { base64UrlToBytes, bytesToBase64Url } from "../../platform/base64";
import { MINUTE, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { commit } from "../unit-of-work";
import { callerSession, type NewSession, openSession, SIGN_IN_ACCOUNT_LIMITS, throttle } from "./sessions";

/**
 * Passkeys: WebAuthn credentials a member registers from the console and signs in with, in place of a password and
 * TOTP code (a discoverable credential the authenticator unlocks with the person's PIN or biometrics: two factors
 * in one gesture). Verified with SimpleWebAuthn; every challenge is the API's own, used once, for five minutes.
 */

export const PASSKEYS_PER_MEMBER = 10;
const CHALLENGE_TTL_MS = 5 * MINUTE;

/** The relying party: the API's own origin (the console is served from it), its host as the passkeys' RP ID. */
export interface RelyingParty {
  origin: string;
  name: string;
}

const rpId = (rp: RelyingParty) => new URL(rp.origin).hostname;

/** The options `navigator.credentials.create` takes to add a passkey to the signed-in member. */
export async function passkeyRegistrationOptions(
  ctx: DomainContext,
  principal: Principal,
  rp: RelyingParty,
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const member = await sessionMember(ctx, principal);
  const existing = await ctx.db
    .select({ credentialId: memberPasskeys.credentialId, transports: memberPasskeys.transports })
    .from(memberPasskeys)
    .where(eq(memberPasskeys.memberId, member.id))
    .limit(PASSKEYS_PER_MEMBER + 1);
  if (existing.length >= PASSKEYS_PER_MEMBER) throw new ApiError("passkey_limit");
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rpId(rp),
    userName: member.email,
    userDisplayName: member.name,
    userID: new Uint8Array(new TextEncoder().encode(member.id)),
    timeout: CHALLENGE_TTL_MS,
    attestationType: "none",
    excludeCredentials: existing.map((one) => ({ id: one.credentialId, transports: JSON.parse(one.transports) })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
  await storeChallenge(ctx, options.challenge, "register", member.id);
  return options;
}

/**
 * Adds the passkey the browser created from `passkeyRegistrationOptions` (its challenge used up either way), named
 * by the member. 400 `passkey_rejected` when the answer does not verify; 409 `passkey_limit` past 10.
 */
export async function addPasskey(
  ctx: DomainContext,
  principal: Principal,
  input: { name: string; credential: RegistrationResponseJSON },
  rp: RelyingParty,
): Promise<MemberPasskeyRow> {
  const member = await sessionMember(ctx, principal);
  const verified = await verifyRegistrationResponse({
    response: input.credential,
    expectedChallenge: (challenge) => consumeChallenge(ctx, challenge, "register", member.id),
    expectedOrigin: rp.origin,
    expectedRPID: rpId(rp),
    requireUserVerification: true,
  }).catch(() => ({ verified: false as const }));
  if (!verified.verified) throw new ApiError("passkey_rejected");
  const { credential, credentialBackedUp } = verified.registrationInfo;
  const at = now();
  const row: MemberPasskeyRow = {
    id: newId("passkey", at),
    accountId: member.accountId,
    memberId: member.id,
    name: input.name,
    credentialId: credential.id,
    publicKey: bytesToBase64Url(credential.publicKey),
    signCount: credential.counter,
    transports: JSON.stringify(credential.transports ?? []),
    backedUp: credentialBackedUp,
    createdAt: at,
    lastUsedAt: null,
  };
  // The count is decided in the statement itself: two additions at once cannot pass 10 together.
  const insert = insertWhere(
    ctx.db,
    memberPasskeys,
    row,
    sql`(SELECT COUNT(*) FROM ${memberPasskeys} WHERE ${memberPasskeys.memberId} = ${member.id}) < ${PASSKEYS_PER_MEMBER}`,
  ).returning({ id: memberPasskeys.id });
  let added: { id: string }[];
  try {
    const committed = await commit(ctx, [
      insert,
      ...auditStatements(ctx, {
        action: "member.passkey_added",
        accountId: member.accountId,
        resourceId: member.id,
        after: { passkey: row.id, name: row.name },
        ifChanged: true,
      }),
    ]);
    added = committed.of(insert);
  } catch (error) {
    // The same authenticator registered twice (the options exclude it; an old page may not).
    if (isUniqueViolation(error, "credential_id")) throw new ApiError("passkey_rejected");
    throw error;
  }
  if (added.length === 0) throw new ApiError("passkey_limit");
  return row;
}

/** The signed-in member's passkeys, newest first. */
export async function listPasskeys(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const { memberId } = callerSession(principal);
  const page = keysetPage(memberPasskeys.id, query);
  return ctx.db
    .select()
    .from(memberPasskeys)
    .where(and(eq(memberPasskeys.memberId, memberId), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/** Removes one of the member's own passkeys (another member's, or an unknown id: 404 `passkey_not_found`). */
export async function removePasskey(ctx: DomainContext, principal: Principal, id: string): Promise<void> {
  const { memberId } = callerSession(principal);
  if (!isId("passkey", id)) throw new ApiError("passkey_not_found");
  const removal = ctx.db
    .delete(memberPasskeys)
    .where(and(eq(memberPasskeys.id, id), eq(memberPasskeys.memberId, memberId)))
    .returning({ id: memberPasskeys.id });
  const committed = await commit(ctx, [
    removal,
    ...auditStatements(ctx, {
      action: "member.passkey_removed",
      accountId: principal.accountId,
      resourceId: memberId,
      before: { passkey: id },
      ifChanged: true,
    }),
  ]);
  if (committed.of(removal).length === 0) throw new ApiError("passkey_not_found");
}

/** The options `navigator.credentials.get` takes to sign in with any passkey of this site (the person picks one). */
export async function passkeySignInOptions(
  ctx: DomainContext,
  rp: RelyingParty,
): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: rpId(rp),
    timeout: CHALLENGE_TTL_MS,
    userVerification: "required",
  });
  await storeChallenge(ctx, options.challenge, "sign_in", null);
  return options;
}

/**
 * Signs in with a passkey: the credential names its member; its signature over a challenge of ours, made with the
 * person verified, opens a session as a password and TOTP code would. An unknown or removed passkey, a removed
 * member, a used challenge, a wrong origin and a counter that went back all answer 401 `invalid_credentials`;
 * attempts count against the member's account like password sign-ins.
 */
export async function signInWithPasskey(
  ctx: DomainContext,
  credential: AuthenticationResponseJSON,
  rp: RelyingParty,
  meta: { ip: string | null; userAgent: string | null; requestId: string },
): Promise<NewSession> {
  const found = await ctx.db
    .select({ passkey: memberPasskeys, member: members })
    .from(memberPasskeys)
    .innerJoin(members, eq(members.id, memberPasskeys.memberId))
    .where(and(eq(memberPasskeys.credentialId, credential.id), isNull(members.removedAt)))
    .get();
  if (!found) throw new ApiError("invalid_credentials", "This passkey is not registered here.");
  const { passkey, member } = found;
  await throttle(ctx, `sign-in-account:${member.accountId}`, SIGN_IN_ACCOUNT_LIMITS);
  const userHandle = credential.response.userHandle;
  if (userHandle !== undefined && userHandle !== bytesToBase64Url(new TextEncoder().encode(member.id))) {
    throw new ApiError("invalid_credentials", "The passkey does not belong to its member.");
  }
  const verified = await verifyAuthenticationResponse({
    response: credential,
    expectedChallenge: (challenge) => consumeChallenge(ctx, challenge, "sign_in", null),
    expectedOrigin: rp.origin,
    expectedRPID: rpId(rp),
    credential: {
      id: passkey.credentialId,
      publicKey: base64UrlToBytes(passkey.publicKey),
      counter: passkey.signCount,
      transports: JSON.parse(passkey.transports),
    },
    requireUserVerification: true,
  }).catch(() => ({ verified: false as const, authenticationInfo: undefined }));
  if (!verified.verified || !verified.authenticationInfo) {
    throw new ApiError(
      "invalid_credentials",
      "The passkey's answer did not verify: ask for new options and try again.",
    );
  }
  const at = now();
  const counter = verified.authenticationInfo.newCounter;
  return openSession(ctx, member, meta, {}, [
    ctx.db
      .update(memberPasskeys)
      // Two sign-ins at once each passed the counter check: the stored counter only moves up.
      .set({
        signCount: sql`max(${memberPasskeys.signCount}, ${counter})`,
        lastUsedAt: at,
        backedUp: verified.authenticationInfo.credentialBackedUp,
      })
      .where(eq(memberPasskeys.id, passkey.id)),
  ]);
}

/** Challenges past their five minutes, deleted by the minute's jobs (a used one is deleted as it is checked). */
export async function pruneExpiredPasskeyChallenges(ctx: DomainContext, at: number): Promise<number> {
  const gone = await ctx.db
    .delete(passkeyChallenges)
    .where(lt(passkeyChallenges.expiresAt, at))
    .returning({ challenge: passkeyChallenges.challenge });
  return gone.length;
}

async function sessionMember(ctx: DomainContext, principal: Principal): Promise<MemberRow> {
  const { memberId } = callerSession(principal);
  const member = await ctx.db
    .select()
    .from(members)
    .where(and(eq(members.id, memberId), isNull(members.removedAt)))
    .get();
  if (!member) throw new ApiError("session_required");
  return member;
}

async function storeChallenge(
  ctx: DomainContext,
  challenge: string,
  purpose: "register" | "sign_in",
  memberId: string | null,
): Promise<void> {
  await ctx.db.insert(passkeyChallenges).values({ challenge, purpose, memberId, expiresAt: now() + CHALLENGE_TTL_MS });
}

/** True once for a challenge we handed out for this purpose (and member), unexpired: it is deleted as it is read. */
async function consumeChallenge(
  ctx: DomainContext,
  challenge: string,
  purpose: "register" | "sign_in",
  memberId: string | null,
): Promise<boolean> {
  const owner = memberId === null ? isNull(passkeyChallenges.memberId) : eq(passkeyChallenges.memberId, memberId);
  const used = await ctx.db
    .delete(passkeyChallenges)
    .where(
      and(
        eq(passkeyChallenges.challenge, challenge),
        eq(passkeyChallenges.purpose, purpose),
        owner,
        gt(passkeyChallenges.expiresAt, now()),
      ),
    )
    .returning({ challenge: passkeyChallenges.challenge });
  return used.length === 1;
}

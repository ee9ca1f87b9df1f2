import { and, eq, gt, isNull } from "drizzle-orm";
import { type MemberRow, type MemberSessionRow, memberSessions, members } from "../../db/schema";
import type { WindowLimits } from "../../durable-objects/api-key-guard/contract";
import { bytesToBase64Url } from "../../platform/base64";
import { HOUR, MINUTE, now } from "../../platform/clock";
import { derivedHmacKey, randomString, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { spendVerification, verifyPassword } from "../../platform/passwords";
import type { MemberRole } from "../../vocabulary";
import { unauthenticatedGuard } from "../api-keys/api-keys";
import { auditStatements } from "../audit/audit-log";
import type { Actor, DomainContext, Principal } from "../context";
import { commit, type Step } from "../unit-of-work";
import { consumeMemberMfaCode } from "./member-mfa";
import {
  endSessions,
  memberActor,
  membersWithEmail,
  newPasswordHash,
  normalizeEmail,
  peppers,
  syncMemberGuard,
} from "./members";

/** A session ends after this long without a request (idle), and this long after sign-in whatever happens. */
export const SESSION_IDLE_MS = 1 * HOUR;
export const SESSION_ABSOLUTE_MS = 12 * HOUR;
/** `last_seen_at` is written at most this often: the idle timeout is exact to this. */
const TOUCH_EVERY_MS = MINUTE;
/** Sign-in attempts per email address and per account (every attempt counts, a success too). */
export const SIGN_IN_ADDRESS_LIMITS: WindowLimits = { perMinute: 10, perDay: 100 };
export const SIGN_IN_ACCOUNT_LIMITS: WindowLimits = { perMinute: 60, perDay: 1000 };
/** Password-reset mails asked for one address: no address is flooded with them. */
export const RESET_ADDRESS_LIMITS: WindowLimits = { perMinute: 3, perDay: 20 };

/** Who a request authenticated as, before its guard admits it. */
export type Caller =
  | { kind: "key"; keyId: string; tokenHash: string; livemode: boolean }
  | { kind: "session"; session: ActiveSession }
  | { kind: "oauth"; grant: GrantCaller };

/**
 * A member acting through an OAuth grant (an AI assistant's token on `/mcp`): the grant as D1 holds it now (not
 * revoked, the member present), its scopes to be cut to the member's role by the member's guard.
 */
export interface GrantCaller {
  id: string;
  memberId: string;
  email: string;
  accountId: string;
  clientId: string;
  clientName: string;
  scopes: string[];
  /** The SHA-256 of the access token (the principal's `tokenHash`). */
  tokenHash: string;
}

/** A live session, as a request presenting its cookie finds it. */
export interface ActiveSession {
  id: string;
  memberId: string;
  accountId: string;
  email: string;
  role: MemberRole;
  /** The SHA-256 of the cookie's token: the member's guard says whether it is still accepted. */
  tokenHash: string;
  expiresAt: number;
}

export interface SignInInput {
  email: string;
  password: string;
  mfaCode?: string;
  /** The account, when the address belongs to members of several. */
  account?: string;
}

export interface NewSession {
  session: MemberSessionRow;
  member: MemberRow;
  /** The cookie's value (stored hashed) and its CSRF token (derived from it). */
  token: string;
  csrfToken: string;
}

/**
 * 429 `rate_limited` from a throttle's window (a guard of its own, as calls without a key have per client address),
 * its wait in `Retry-After`.
 */
export async function throttle(ctx: DomainContext, name: string, limits: WindowLimits): Promise<void> {
  const verdict = await unauthenticatedGuard(ctx, name).admitUnauthenticated(limits);
  if (verdict.allowed) return;
  throw new ApiError("rate_limited", "Too many attempts for this address or account: wait before trying again.", {
    headers: { "Retry-After": String(verdict.retryAfter ?? 1) },
    limit: { limit: verdict.limit, current: verdict.limit, raisedBy: "nothing: wait for the window to pass" },
  });
}

/**
 * Signs a member in with email and password (+ a TOTP or recovery code when the member enrolled one), throttled
 * per address and per account, and opens a new session (a fresh random id: a session fixed before sign-in is never
 * the one after it). Wrong email, wrong password and an unknown address answer alike, in about the same time.
 */
export async function signIn(
  ctx: DomainContext,
  input: SignInInput,
  meta: { ip: string | null; userAgent: string | null; requestId: string },
): Promise<NewSession> {
  const email = normalizeEmail(input.email);
  await throttle(ctx, `sign-in:${await sha256Hex(email)}`, SIGN_IN_ADDRESS_LIMITS);
  const candidates = await membersWithEmail(ctx, email, input.account, 2);
  const pepperList = peppers(ctx.env);
  const member = candidates[0];
  if (!member) {
    await spendVerification(pepperList[0] as (typeof pepperList)[number]);
    throw new ApiError("invalid_credentials");
  }
  await throttle(ctx, `sign-in-account:${member.accountId}`, SIGN_IN_ACCOUNT_LIMITS);
  const verified = await verifyPassword(input.password, member.passwordHash, pepperList);
  if (!verified.ok) throw new ApiError("invalid_credentials");
  // Told only to who knows a password of the address.
  if (candidates.length > 1) throw new ApiError("account_required");
  if (member.mfaEnabled) {
    if (!input.mfaCode) throw new ApiError("mfa_required", "This member has MFA: send `mfa_code` with the sign-in.");
    if (!(await consumeMemberMfaCode(ctx, member, input.mfaCode))) {
      throw new ApiError("mfa_required", "The MFA code is invalid or was already used.");
    }
  }
  const rehash = verified.rehash ? { passwordHash: await newPasswordHash(ctx.env, input.password) } : {};
  return openSession(ctx, member, meta, rehash);
}

/**
 * A new session for a member whose credentials were just checked (a fresh random token: a session fixed before
 * sign-in is never the one after it), recorded with the member's sign-in time and `memberChanges` in one batch.
 */
export async function openSession(
  ctx: DomainContext,
  member: MemberRow,
  meta: { ip: string | null; userAgent: string | null; requestId: string },
  memberChanges: Partial<Pick<MemberRow, "passwordHash">> = {},
  alsoWrite: Step[] = [],
): Promise<NewSession> {
  const actor = memberActor(member, { keyId: null, sourceIp: meta.ip, requestId: meta.requestId });
  const at = now();
  const token = randomString(43);
  const session: MemberSessionRow = {
    id: newId("memberSession", at),
    memberId: member.id,
    accountId: member.accountId,
    tokenHash: await sha256Hex(token),
    createdAt: at,
    lastSeenAt: at,
    expiresAt: at + SESSION_ABSOLUTE_MS,
    revokedAt: null,
    ip: meta.ip,
    userAgent: meta.userAgent?.slice(0, 200) ?? null,
  };
  await commit({ ...ctx, actor }, [
    ctx.db.insert(memberSessions).values(session),
    ctx.db
      .update(members)
      .set({ lastSignInAt: at, ...memberChanges })
      .where(eq(members.id, member.id)),
    ...alsoWrite,
  ]);
  // The member's guard accepts the new session from its first request.
  await syncMemberGuard(ctx, member.id);
  return { session, member, token, csrfToken: await csrfTokenFor(ctx.env, token) };
}

interface CachedSession {
  session: ActiveSession;
  /** When D1 last vouched for it (and moved its `last_seen_at`). */
  checkedAt: number;
}

// token hash → session, for a minute. Whether the session is still accepted (not ended, nor its member removed) is
// the member's guard's call on every request, as a key's; the cache only spares the read, and D1 sees the session
// used at least once a minute, which the idle timeout counts on.
const sessionCache = new Map<string, CachedSession>();
const SESSION_CACHE_MAX = 10_000;

/**
 * The session a cookie's token opens, or null: unknown, revoked, past its absolute or idle timeout, or of a removed
 * member, as D1 had it at most a minute ago (the member's guard then refuses a session ended since). Read from D1
 * at most once a minute per session, which moves its `last_seen_at`.
 */
export async function sessionForToken(ctx: DomainContext, token: string): Promise<ActiveSession | null> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return null;
  const tokenHash = await sha256Hex(token);
  const at = now();
  const cached = sessionCache.get(tokenHash);
  if (cached && at - cached.checkedAt < TOUCH_EVERY_MS && at < cached.session.expiresAt) return cached.session;
  sessionCache.delete(tokenHash);
  const row = await ctx.db
    .select({
      id: memberSessions.id,
      memberId: memberSessions.memberId,
      accountId: memberSessions.accountId,
      lastSeenAt: memberSessions.lastSeenAt,
      expiresAt: memberSessions.expiresAt,
      revokedAt: memberSessions.revokedAt,
      email: members.email,
      role: members.role,
      removedAt: members.removedAt,
    })
    .from(memberSessions)
    .innerJoin(members, eq(members.id, memberSessions.memberId))
    .where(eq(memberSessions.tokenHash, tokenHash))
    .get();
  if (!row || row.revokedAt !== null || row.removedAt !== null) return null;
  if (at >= row.expiresAt || at - row.lastSeenAt >= SESSION_IDLE_MS) return null;
  if (at - row.lastSeenAt >= TOUCH_EVERY_MS) {
    await ctx.db.update(memberSessions).set({ lastSeenAt: at }).where(eq(memberSessions.id, row.id));
  }
  const session: ActiveSession = {
    id: row.id,
    memberId: row.memberId,
    accountId: row.accountId,
    email: row.email,
    role: row.role,
    tokenHash,
    expiresAt: row.expiresAt,
  };
  if (sessionCache.size >= SESSION_CACHE_MAX) sessionCache.clear();
  sessionCache.set(tokenHash, { session, checkedAt: at });
  return session;
}

/**
 * A session's CSRF token: an HMAC of its cookie's token under a key derived from `SEALING_KEY`, so it is stored
 * nowhere, can be shown again (`GET /auth/session`) to the page that holds the cookie, and cannot be made by a page
 * that does not.
 */
export async function csrfTokenFor(env: Cloudflare.Env, sessionToken: string): Promise<string> {
  const key = await derivedHmacKey(env.SEALING_KEY, "member-session-csrf");
  return bytesToBase64Url(
    new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(sessionToken))),
  );
}

/** The calling member's own session, or 403 `session_required` (an API key has none). */
export function callerSession(principal: Principal): { memberId: string; sessionId: string } {
  const member = principal.member;
  if (!member?.sessionId) throw new ApiError("session_required");
  return { memberId: member.id, sessionId: member.sessionId };
}

/** The member's sessions still open, newest first. */
export function listSessions(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const { memberId } = callerSession(principal);
  const page = keysetPage(memberSessions.id, query);
  const at = now();
  return ctx.db
    .select()
    .from(memberSessions)
    .where(
      and(
        eq(memberSessions.memberId, memberId),
        isNull(memberSessions.revokedAt),
        gt(memberSessions.expiresAt, at),
        gt(memberSessions.lastSeenAt, at - SESSION_IDLE_MS),
        page.where,
      ),
    )
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/** Ends one of the member's own sessions (another member's, or an unknown id, is 404 `not_found`). */
export async function revokeSession(ctx: DomainContext, principal: Principal, id: string): Promise<void> {
  const { memberId } = callerSession(principal);
  const ended = isId("memberSession", id)
    ? await ctx.db
        .update(memberSessions)
        .set({ revokedAt: now() })
        .where(and(eq(memberSessions.id, id), eq(memberSessions.memberId, memberId), isNull(memberSessions.revokedAt)))
        .returning({ id: memberSessions.id })
    : [];
  if (ended.length === 0) throw new ApiError("not_found", "No open session of yours has this id.");
  await syncMemberGuard(ctx, memberId);
}

/** Signs the calling session out. */
export async function signOut(ctx: DomainContext, principal: Principal): Promise<void> {
  const { memberId, sessionId } = callerSession(principal);
  await ctx.db.update(memberSessions).set({ revokedAt: now() }).where(eq(memberSessions.id, sessionId));
  await syncMemberGuard(ctx, memberId);
}

/** A session a browser still presents at a new sign-in: it ends, so one browser holds one session. */
export async function endPresentedSession(ctx: DomainContext, token: string): Promise<void> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return;
  const ended = await ctx.db
    .update(memberSessions)
    .set({ revokedAt: now() })
    .where(and(eq(memberSessions.tokenHash, await sha256Hex(token)), isNull(memberSessions.revokedAt)))
    .returning({ memberId: memberSessions.memberId });
  for (const { memberId } of ended) await syncMemberGuard(ctx, memberId);
}

/**
 * "Sign out everywhere": every session of the member ends, the calling one with `exceptSessionId` kept (null: all).
 * Recorded in the audit log.
 */
export async function revokeMemberSessions(
  ctx: DomainContext,
  member: { id: string; accountId: string },
  exceptSessionId: string | null,
  actor: Actor | undefined = ctx.actor,
): Promise<number> {
  const ending = endSessions(ctx, member.id, now(), { except: exceptSessionId });
  const committed = await commit({ ...ctx, actor }, [
    ending,
    ...auditStatements(
      { ...ctx, actor },
      {
        action: "member.sessions_revoked",
        accountId: member.accountId,
        resourceId: member.id,
        after: { sessions: "revoked" },
      },
    ),
  ]);
  await syncMemberGuard(ctx, member.id);
  return committed.of(ending).length;
}

/**
 * Changes the signed-in member's password, given its current one (401 `invalid_credentials` otherwise): every other
 * session of the member ends, this one stays. Throttled like a sign-in, per address.
 */
export async function changePassword(
  ctx: DomainContext,
  principal: Principal,
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  const { memberId, sessionId } = callerSession(principal);
  const member = await ctx.db.select().from(members).where(eq(members.id, memberId)).get();
  if (!member) throw new ApiError("session_required");
  await throttle(ctx, `sign-in:${await sha256Hex(member.email)}`, SIGN_IN_ADDRESS_LIMITS);
  const verified = await verifyPassword(input.currentPassword, member.passwordHash, peppers(ctx.env));
  if (!verified.ok) throw new ApiError("invalid_credentials", "The current password is not right.");
  const at = now();
  const passwordHash = await newPasswordHash(ctx.env, input.newPassword);
  await commit(ctx, [
    ctx.db.update(members).set({ passwordHash, updatedAt: at }).where(eq(members.id, memberId)),
    ...auditStatements(ctx, {
      action: "member.password_changed",
      accountId: member.accountId,
      resourceId: memberId,
      after: { passwordHash },
    }),
    endSessions(ctx, memberId, at, { except: sessionId }),
  ]);
  await syncMemberGuard(ctx, memberId);
}

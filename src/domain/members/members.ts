import { and, asc, eq, gt, isNull, ne, type SQL, sql } from "drizzle-orm";
import { isUniqueViolation } from "../../db/errors";
import { accounts, type MemberRow, memberSessions, members } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { ApiKeyGuardClient } from "../../durable-objects/api-key-guard";
import type { GuardConfig } from "../../durable-objects/api-key-guard/contract";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { hashPassword, type Pepper, parsePepper } from "../../platform/passwords";
import { type KeyScopes, keyAreas, type MemberRole, roleRank, roleScopes, scopeAllows } from "../../vocabulary";
import { syncMemberKeys } from "../api-keys/api-keys";
import { reviewKeyChannels } from "../api-keys/key-channels";
import { auditStatements, commitAudited } from "../audit/audit-log";
import type { Actor, DomainContext, Principal } from "../context";
import { endMemberGrants } from "../oauth/grants";
import { effectiveLimits } from "../plans";
import { commit } from "../unit-of-work";

/** Emails are compared case-insensitively: stored and looked up lower-case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** The peppers passwords are hashed with: the current one first, then the one before a rotation. */
export function peppers(env: Cloudflare.Env): Pepper[] {
  const current = parsePepper(env.PASSWORD_PEPPER);
  if (!current) throw new Error("PASSWORD_PEPPER is not set (`<version>:<secret>`): members cannot sign in");
  const previous = parsePepper(env.PASSWORD_PEPPER_PREVIOUS);
  return previous && previous.version !== current.version ? [current, previous] : [current];
}

export function newPasswordHash(env: Cloudflare.Env, password: string): Promise<string> {
  return hashPassword(password, peppers(env)[0] as Pepper);
}

/** How a member appears in the audit log's actor. */
export function memberActor(member: Pick<MemberRow, "id" | "email">, base: Omit<Actor, "member">): Actor {
  return { ...base, member: { id: member.id, email: member.email } };
}

// ── The member's guard: rate limits, idempotency and the account revision, as a key's ──────────────

/** The guard of a member's requests (one per member, like a key's), configured from D1 on first use. */
export function memberGuard(ctx: DomainContext, memberId: string): ApiKeyGuardClient {
  return new ApiKeyGuardClient(ctx.env, memberId, () => loadMemberGuardConfig(ctx, memberId));
}

async function loadMemberGuardConfig(ctx: DomainContext, memberId: string): Promise<GuardConfig | null> {
  const at = now();
  const [row, sessions] = await ctx.db.batch([
    ctx.db
      .select({
        accountId: members.accountId,
        role: members.role,
        removedAt: members.removedAt,
        plan: accounts.plan,
        limits: accounts.limits,
      })
      .from(members)
      .innerJoin(accounts, eq(accounts.id, members.accountId))
      .where(eq(members.id, memberId)),
    ctx.db
      .select({ hash: memberSessions.tokenHash, until: memberSessions.expiresAt })
      .from(memberSessions)
      .where(
        and(eq(memberSessions.memberId, memberId), isNull(memberSessions.revokedAt), gt(memberSessions.expiresAt, at)),
      ),
  ]);
  const member = row[0];
  if (!member) return null;
  return {
    accountId: member.accountId,
    plan: member.plan,
    products: null,
    limits: effectiveLimits(member.plan, member.limits).api,
    revoked: member.removedAt !== null,
    scopes: roleScopes[member.role],
    subuserIds: null,
    role: member.role,
    tokens: sessions,
  };
}

/**
 * Tells the member's guard its role, state and live sessions as D1 has them now: a change (a role, a removal, a
 * session begun or ended) is in force on the member's next call everywhere once this returns.
 */
export async function syncMemberGuard(ctx: DomainContext, memberId: string): Promise<void> {
  const config = await loadMemberGuardConfig(ctx, memberId);
  if (!config) return;
  await memberGuard(ctx, memberId).configure(config);
  // Its live tails close with the session that opened them, or with the member's reach.
  await reviewKeyChannels(ctx, memberId, config);
}

/** Pushes an account's current plan and limits to its members' guards (as `syncAccountGuards` to its keys'). */
export async function syncAccountMembers(ctx: DomainContext, accountId: string): Promise<void> {
  const rows = await ctx.db.select({ id: members.id }).from(members).where(eq(members.accountId, accountId));
  await Promise.all(rows.map((row) => syncMemberGuard(ctx, row.id)));
}

// ── Reading ────────────────────────────────────────────────────────────────────────────────────────

/** The account's present members, newest first. */
export function listMembers(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const page = keysetPage(members.id, query);
  return ctx.db
    .select()
    .from(members)
    .where(and(eq(members.accountId, principal.accountId), isNull(members.removedAt), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * The present members with an address (lower-cased here), of one account when given, oldest first: whom a sign-in
 * or a password reset is about. An address is a member of few accounts; `limit` bounds the answer.
 */
export function membersWithEmail(ctx: DomainContext, email: string, accountId: string | undefined, limit: number) {
  return ctx.db
    .select()
    .from(members)
    .where(
      and(
        eq(members.email, normalizeEmail(email)),
        isNull(members.removedAt),
        accountId ? eq(members.accountId, accountId) : undefined,
      ),
    )
    .orderBy(asc(members.id))
    .limit(limit);
}

/** A present member of the caller's account; anything else (another account's too) is 404 `member_not_found`. */
export async function findMember(ctx: DomainContext, principal: Principal, id: string): Promise<MemberRow> {
  const member = isId("member", id)
    ? await ctx.db
        .select()
        .from(members)
        .where(and(eq(members.id, id), eq(members.accountId, principal.accountId), isNull(members.removedAt)))
        .get()
    : undefined;
  if (!member) throw new ApiError("member_not_found");
  return member;
}

// ── Who may grant what ─────────────────────────────────────────────────────────────────────────────

/**
 * How strong the caller is among members: a member's role rank; a key without scope limits ranks as an owner (it
 * can do everything already), a scoped key as an admin.
 */
function callerRank(principal: Principal): number {
  if (principal.member) return roleRank(principal.member.role);
  return principal.scopes === null ? roleRank("owner") : roleRank("admin");
}

function scopesWithin(granted: KeyScopes | null, holder: KeyScopes | null): boolean {
  if (holder === null) return true;
  if (granted === null) return false;
  return keyAreas.every((area) => {
    const access = granted[area];
    return access === undefined || scopeAllows(holder, area, access);
  });
}

/**
 * Nobody grants more than they have: a role is given only by a caller whose own scopes cover the role's, and below
 * an owner only roles ranked under the caller's own: an admin gives developer and viewer (billing's money is not
 * an admin's to give). Refused with 403 `insufficient_scope`.
 */
export function assertMayGrant(principal: Principal, role: MemberRole): void {
  // A role covers every product: a key scoped to some cannot give one.
  if (principal.products !== null) {
    throw new ApiError(
      "insufficient_scope",
      "A key scoped to products cannot grant a role: roles cover every product.",
    );
  }
  const rank = callerRank(principal);
  if (!scopesWithin(roleScopes[role], principal.scopes) || (rank < roleRank("owner") && roleRank(role) >= rank)) {
    throw new ApiError("insufficient_scope", `The caller cannot grant the role ${role}: it is not within its own.`);
  }
}

/** Below an owner, a caller manages only members ranked under itself (an admin: not owners, not other admins). */
function assertMayManage(principal: Principal, target: MemberRow): void {
  const rank = callerRank(principal);
  if (rank < roleRank("owner") && roleRank(target.role) >= rank && principal.member?.id !== target.id) {
    throw new ApiError("insufficient_scope", `The caller cannot change a member whose role is ${target.role}.`);
  }
}

/** The statement's condition: the change leaves the account an owner (the target is not its last one). */
function keepsAnOwner(target: MemberRow): SQL {
  return sql`(${target.role} <> 'owner' OR (SELECT COUNT(*) FROM ${members} WHERE ${members.accountId} = ${target.accountId}
    AND ${members.role} = 'owner' AND ${members.removedAt} IS NULL) > 1)`;
}

// ── Writing ────────────────────────────────────────────────────────────────────────────────────────

export interface NewMember {
  email: string;
  name: string;
  role: MemberRole;
  password: string;
}

/** The row of a new member (its password hashed), for the batch that adds it. */
export async function newMemberRow(ctx: DomainContext, accountId: string, input: NewMember): Promise<MemberRow> {
  const at = now();
  return {
    id: newId("member", at),
    accountId,
    email: normalizeEmail(input.email),
    name: input.name,
    role: input.role,
    passwordHash: await newPasswordHash(ctx.env, input.password),
    mfaEnabled: false,
    mfaSecretSealed: null,
    mfaPendingSecretSealed: null,
    mfaLastStep: null,
    lastSignInAt: null,
    createdAt: at,
    updatedAt: at,
    removedAt: null,
  };
}

/**
 * An account's member made by an operator (`POST /internal/admin/accounts/{id}/members`): how an account's first
 * owner is made; the others are invited. 409 `member_exists` when a present member has the email.
 */
export async function addMember(ctx: DomainContext, accountId: string, input: NewMember): Promise<MemberRow> {
  const account = await ctx.db.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).get();
  if (!account) throw new ApiError("not_found", "No account with this id exists.");
  const row = await newMemberRow(ctx, accountId, input);
  await withUniqueMember(() =>
    commit(ctx, [
      ctx.db.insert(members).values(row),
      ...auditStatements(ctx, { action: "member.created", accountId, resourceId: row.id, after: memberFields(row) }),
    ]),
  );
  return row;
}

/** The fields of a member the audit log records (never its secrets' values). */
export function memberFields(row: MemberRow) {
  return { email: row.email, name: row.name, role: row.role };
}

export async function withUniqueMember<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, "members")) throw new ApiError("member_exists");
    throw error;
  }
}

/** A new role or name; the role within the caller's own, the account never left without an owner. */
export async function updateMember(
  ctx: DomainContext,
  principal: Principal,
  id: string,
  changes: { role?: MemberRole; name?: string },
): Promise<MemberRow> {
  const member = await findMember(ctx, principal, id);
  const roleChanges = changes.role !== undefined && changes.role !== member.role;
  if (roleChanges) {
    assertMayManage(principal, member);
    assertMayGrant(principal, changes.role as MemberRole);
  } else if (principal.member?.id !== member.id) {
    assertMayManage(principal, member);
  }
  const written = { ...changes, updatedAt: now() };
  const updated = await commitAudited(
    ctx,
    ctx.db
      .update(members)
      .set(written)
      .where(and(eq(members.id, id), isNull(members.removedAt), roleChanges ? keepsAnOwner(member) : undefined))
      .returning(),
    { action: "member.updated", accountId: member.accountId, resourceId: id, before: member, after: changes },
  );
  if (updated.length === 0) throw new ApiError("last_owner");
  if (roleChanges) await Promise.all([syncMemberGuard(ctx, id), syncMemberKeys(ctx, id)]);
  return updated[0] as MemberRow;
}

/**
 * Removes a member: its sessions end, its connected applications are revoked, and its guard refuses it from the
 * next call. Keys it made stay (they belong to the account; revoke them separately). The last owner cannot be
 * removed.
 */
export async function removeMember(ctx: DomainContext, principal: Principal, id: string): Promise<void> {
  const member = await findMember(ctx, principal, id);
  assertMayManage(principal, member);
  const at = now();
  const removal = ctx.db
    .update(members)
    .set({ removedAt: at, updatedAt: at })
    .where(and(eq(members.id, id), isNull(members.removedAt), keepsAnOwner(member)))
    .returning({ id: members.id });
  const removed = sql`EXISTS (SELECT 1 FROM ${members} WHERE ${members.id} = ${id} AND ${members.removedAt} IS NOT NULL)`;
  const committed = await commit(ctx, [
    removal,
    ...auditStatements(ctx, {
      action: "member.removed",
      accountId: member.accountId,
      resourceId: id,
      before: memberFields(member),
      ifChanged: true,
    }),
    // Only when the removal happened: the last owner's sessions and connected applications stay.
    endSessions(ctx, id, at, { when: removed }),
    endMemberGrants(ctx, id, at, removed),
  ]);
  if (committed.of(removal).length === 0) throw new ApiError("last_owner");
  await syncMemberGuard(ctx, id);
}

/**
 * The statement that ends a member's open sessions at `at` (all but `except`; only `when` a condition holds, for a
 * batch whose earlier statement decides), answering the sessions it ended. The member's guard must be told after.
 */
export function endSessions(
  ctx: DomainContext,
  memberId: string,
  at: number,
  options: { except?: string | null; when?: SQL } = {},
) {
  return ctx.db
    .update(memberSessions)
    .set({ revokedAt: at })
    .where(
      and(
        eq(memberSessions.memberId, memberId),
        isNull(memberSessions.revokedAt),
        options.except ? ne(memberSessions.id, options.except) : undefined,
        options.when,
      ),
    )
    .returning({ id: memberSessions.id });
}

/** Adds a member row with a condition (an invitation still open), for the batch that consumes the condition. */
export function insertMemberWhere(ctx: DomainContext, row: MemberRow, condition: SQL) {
  return insertWhere(ctx.db, members, row, condition).returning({ id: members.id });
}

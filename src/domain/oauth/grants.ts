import { and, eq, isNull, type SQL } from "drizzle-orm";
import { members, type OAuthGrantRow, oauthGrants } from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { scopeAllows } from "../../vocabulary";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { commit } from "../unit-of-work";
import { authorizationServer } from "./provider";

/**
 * A member's OAuth grants ("connected applications"): recorded at consent, checked on every `/mcp` call, listed and
 * revoked by the member (and by the account's owners and admins).
 */

export interface NewGrant {
  accountId: string;
  memberId: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
}

/** Records a consent, with its audit entry (the member acting through its session). */
export async function recordGrant(ctx: DomainContext, grant: NewGrant): Promise<OAuthGrantRow> {
  const row: OAuthGrantRow = {
    id: newId("oauthGrant"),
    ...grant,
    providerGrantId: null,
    createdAt: now(),
    lastUsedAt: null,
    revokedAt: null,
  };
  await commit(ctx, [
    ctx.db.insert(oauthGrants).values(row),
    ...auditStatements(ctx, {
      action: "oauth_grant.created",
      accountId: grant.accountId,
      resourceId: row.id,
      after: { client_id: grant.clientId, client_name: grant.clientName, scopes: grant.scopes },
    }),
  ]);
  return row;
}

/**
 * The statement that revokes a member's grants at `at` (only `when` a condition holds, for a batch whose earlier
 * statement decides): a removed member's connected applications show as revoked. Their tokens already stop, as
 * every `/mcp` call reads the member; the library's KV records expire on their own TTL.
 */
export function endMemberGrants(ctx: DomainContext, memberId: string, at: number, when?: SQL) {
  return ctx.db
    .update(oauthGrants)
    .set({ revokedAt: at })
    .where(and(eq(oauthGrants.memberId, memberId), isNull(oauthGrants.revokedAt), when))
    .returning({ id: oauthGrants.id });
}

/** The library's id of the grant, once it made it: its KV records are deleted with our row's revocation. */
export async function attachProviderGrant(ctx: DomainContext, id: string, providerGrantId: string): Promise<void> {
  await ctx.db.update(oauthGrants).set({ providerGrantId }).where(eq(oauthGrants.id, id));
}

/** A grant a token names, while it stands: not revoked, its member present. Read from D1 on every `/mcp` call. */
export async function liveGrant(
  ctx: DomainContext,
  id: string,
): Promise<{ grant: OAuthGrantRow; email: string } | null> {
  const [found] = await ctx.db
    .select({ grant: oauthGrants, email: members.email })
    .from(oauthGrants)
    .innerJoin(members, eq(members.id, oauthGrants.memberId))
    .where(and(eq(oauthGrants.id, id), isNull(oauthGrants.revokedAt), isNull(members.removedAt)));
  if (!found) return null;
  // `last_used_at` moves at most once a minute: a grant's list shows when it was used, to the minute.
  const at = now();
  if (found.grant.lastUsedAt === null || at - found.grant.lastUsedAt > MINUTE) {
    await ctx.db.update(oauthGrants).set({ lastUsedAt: at }).where(eq(oauthGrants.id, id));
  }
  return found;
}

/** Owners and admins (whose role manages members) see and revoke the account's grants; others, their own. */
function grantsReached(principal: Principal) {
  const member = principal.member;
  if (!member) throw new ApiError("session_required");
  return scopeAllows(principal.scopes, "members", "write")
    ? eq(oauthGrants.accountId, principal.accountId)
    : and(eq(oauthGrants.accountId, principal.accountId), eq(oauthGrants.memberId, member.id));
}

/** The grants standing, newest first, each with its member's email. */
export async function listGrants(ctx: DomainContext, principal: Principal, query: PageQuery) {
  const page = keysetPage(oauthGrants.id, query);
  const rows = await ctx.db
    .select({ grant: oauthGrants, email: members.email })
    .from(oauthGrants)
    .innerJoin(members, eq(members.id, oauthGrants.memberId))
    .where(and(grantsReached(principal), isNull(oauthGrants.revokedAt), isNull(members.removedAt), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
  return rows.map((row) => ({ ...row.grant, email: row.email }));
}

/**
 * Revokes a grant: D1 first (every `/mcp` call reads it, so the grant's tokens stop on their next call), then its
 * tokens and grant in KV (the library's records). Another member's grant, for a caller who may not manage it,
 * answers as one that does not exist.
 */
export async function revokeGrant(ctx: DomainContext, principal: Principal, id: string, origin: string) {
  const revoke = ctx.db
    .update(oauthGrants)
    .set({ revokedAt: now() })
    .where(and(eq(oauthGrants.id, id), grantsReached(principal), isNull(oauthGrants.revokedAt)))
    .returning();
  const committed = isId("oauthGrant", id)
    ? await commit(ctx, [
        revoke,
        ...auditStatements(ctx, {
          action: "oauth_grant.revoked",
          accountId: principal.accountId,
          resourceId: id,
          ifChanged: true,
        }),
      ])
    : null;
  const revoked = committed?.of(revoke)[0] as OAuthGrantRow | undefined;
  if (!revoked) throw new ApiError("not_found", "No connected application of yours has this id.");
  if (revoked.providerGrantId) {
    await authorizationServer(origin).getOAuthApi(ctx.env).revokeGrant(revoked.providerGrantId, revoked.memberId);
  }
}

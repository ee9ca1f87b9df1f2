import { and, eq, isNull, lt } from "drizzle-orm";
import { type SessionTerminationRow, sessionTerminations } from "../../db/schema";
import { TERMINATED_KEPT_MS } from "../../durable-objects/subuser-gate/contract";
import type { SessionFilters, SessionRequest, SessionSnapshot } from "../../durable-objects/traffic-store/contract";
import { MINUTE, now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { idAt } from "../../platform/ids";
import { cursorAfter, type PageQuery } from "../../platform/pagination";
import type { BandwidthProduct } from "../../vocabulary";
import { auditStatements, withdrawnEntry } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertInScope, reaches, subusersRead } from "../scope";
import { subuserGate } from "../subusers/gate-sync";
import { findAccountSubuser } from "../subusers/subusers";
import { commit } from "../unit-of-work";
import { accountStores } from "./store";

export type SessionProduct = BandwidthProduct;

export interface SessionQuery extends PageQuery {
  subuserId?: string;
  sessionId?: string;
  region?: string;
  asn?: number;
  repinned?: boolean;
}

/**
 * The account's sticky sessions of a product (a bound key's: of its sub-users), newest first: live ones, and
 * terminated ones for 24 hours.
 */
export async function listSessions(
  ctx: DomainContext,
  principal: Principal,
  product: SessionProduct,
  query: SessionQuery,
) {
  assertInScope(principal, [product]);
  if (query.subuserId !== undefined) await findAccountSubuser(ctx, principal, query.subuserId);
  const filters: SessionFilters = {
    product,
    subuserIds: subusersRead(principal, query.subuserId),
    sessionId: query.sessionId,
    region: query.region,
    asn: query.asn,
    repinned: query.repinned,
    before: cursorAfter(query.cursor) ?? undefined,
    limit: query.limit + 1,
  };
  return (await accountStores(ctx, principal.accountId)).listSessions(filters);
}

/** One session with its last 10 requests. Expired or unknown: 404 `session_not_found`. */
export async function findSession(
  ctx: DomainContext,
  principal: Principal,
  product: SessionProduct,
  id: string,
): Promise<{ session: SessionSnapshot; lastRequests: SessionRequest[] }> {
  return visibleSession(ctx, principal, product, id);
}

/**
 * Ends a session early: it is `terminated` (and kept 24 hours), and the next request with its username starts a
 * new session with a new exit IP. Terminating a terminated session answers it as it is. A session lives in its
 * gate and the account's store, not D1: the request and its audit entry are recorded first, in one batch, and the
 * cron finishes a request a crash left half-done; a session that had already expired leaves neither.
 *
 * A session decided at the node (its record names its key and generation) ends by bumping the key's generation in
 * its gate, which pushes the sub-user's snapshot to every connected node before this answers; a session the gate
 * started itself (the per-connection path) is ended in the gate's book. Either way the store then keeps the record
 * as terminated.
 */
export async function terminateSession(
  ctx: DomainContext,
  principal: Principal,
  product: SessionProduct,
  id: string,
): Promise<SessionSnapshot> {
  const indexed = await visibleSession(ctx, principal, product, id);
  const request = {
    sessionId: id,
    accountId: principal.accountId,
    gateName: indexed.session.gateName,
    requestedAt: now(),
  };
  await commit(ctx, [
    ctx.db.insert(sessionTerminations).values(request).onConflictDoNothing(),
    ...auditStatements(ctx, {
      action: "session.terminated",
      accountId: principal.accountId,
      resourceId: id,
      products: [product],
      after: { status: "terminated" },
      id: terminationEntryId(request),
      ifChanged: true,
    }),
  ]);
  const terminated = await endSession(ctx, request, indexed.session);
  if (!terminated || !visible(terminated, now())) throw notFound();
  return terminated;
}

type TerminationRequest = Pick<SessionTerminationRow, "sessionId" | "accountId" | "gateName" | "requestedAt">;

/** The request's audit entry: its id is fixed by the request, so that it can be withdrawn. */
function terminationEntryId(request: TerminationRequest): string {
  return idAt("auditEvent", request.requestedAt, request.sessionId);
}

/**
 * Ends the session in its gate and the account's store, and marks the request done. `indexed` is the store's
 * record as the request found it; the cron reads it again (gone: the session expired meanwhile). The gate bumps the
 * key of a session decided at the node (idempotent, so a retry is safe), or ends the session it started itself. A
 * session neither the store shows nor the gate holds was not terminated: the request and its entry are withdrawn.
 */
async function endSession(
  ctx: DomainContext,
  request: TerminationRequest,
  indexed?: SessionSnapshot,
): Promise<SessionSnapshot | null> {
  const stores = await accountStores(ctx, request.accountId);
  const session = indexed ?? (await stores.session(request.sessionId))?.session ?? null;
  const ending = { id: request.sessionId, key: session?.key, generation: session?.generation };
  const { book } = await subuserGate(ctx, request.gateName).terminateSession(ending);
  const ofRequest = eq(sessionTerminations.sessionId, request.sessionId);
  // The gate's own record when it holds one (as the per-connection path always did); else the store's (a record that
  // names no key and that the gate does not hold is ended in the store alone: nothing at the nodes depends on it).
  const terminated =
    book ??
    (session && {
      ...session,
      status: "terminated" as const,
      terminatedAt: session.terminatedAt ?? request.requestedAt,
    });
  if (!terminated) {
    await commit(ctx, [
      withdrawnEntry(ctx, terminationEntryId(request)),
      ctx.db.delete(sessionTerminations).where(ofRequest),
    ]);
    return null;
  }
  await stores.upsertSessions([terminated]);
  await ctx.db.update(sessionTerminations).set({ doneAt: now() }).where(ofRequest);
  return terminated;
}

/** How long a request may wait for its gate before the cron finishes it. */
const TERMINATION_GRACE_MS = MINUTE;
const TERMINATIONS_PER_RUN = 100;

/** The cron's part: finishes termination requests a crash left half-done, and forgets done ones after a day. */
export async function finishTerminations(ctx: DomainContext, at: number): Promise<number> {
  const stalled = await ctx.db
    .select()
    .from(sessionTerminations)
    .where(and(isNull(sessionTerminations.doneAt), lt(sessionTerminations.requestedAt, at - TERMINATION_GRACE_MS)))
    .limit(TERMINATIONS_PER_RUN);
  for (const request of stalled) await endSession(ctx, request);
  await ctx.db
    .delete(sessionTerminations)
    .where(lt(sessionTerminations.doneAt, at - TERMINATED_KEPT_MS - TERMINATION_GRACE_MS));
  return stalled.length;
}

/** A session of the caller's account and of this product, of a sub-user the key reaches, while it is visible. */
async function visibleSession(ctx: DomainContext, principal: Principal, product: SessionProduct, id: string) {
  assertInScope(principal, [product]);
  const found = /^ses_[0-9A-Z]{26}$/.test(id)
    ? await (await accountStores(ctx, principal.accountId)).session(id)
    : null;
  if (!found || found.session.product !== product || !visible(found.session, now())) throw notFound();
  if (!reaches(principal, found.session.subuserId)) throw notFound();
  return found;
}

function visible(session: SessionSnapshot, at: number): boolean {
  return session.status === "active" ? session.expiresAt > at : (session.terminatedAt ?? 0) > at - TERMINATED_KEPT_MS;
}

function notFound(): ApiError {
  return new ApiError("session_not_found");
}

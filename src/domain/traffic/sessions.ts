import { TERMINATED_KEPT_MS } from "../../durable-objects/subuser-gate/contract";
import { TrafficStoreClient } from "../../durable-objects/traffic-store";
import type { SessionFilters, SessionRequest, SessionSnapshot } from "../../durable-objects/traffic-store/contract";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { idAt } from "../../platform/ids";
import { cursorAfter, type PageQuery } from "../../platform/pagination";
import type { BandwidthProduct } from "../../vocabulary";
import { auditStatements } from "../audit/audit-log";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";
import { subuserGate } from "../subusers/gate-sync";
import { findAccountSubuser } from "../subusers/subusers";
import { commit } from "../unit-of-work";

export type SessionProduct = BandwidthProduct;

export interface SessionQuery extends PageQuery {
  subuserId?: string;
  sessionId?: string;
  region?: string;
  asn?: number;
  repinned?: boolean;
}

/** The account's sticky sessions of a product, newest first: live ones, and terminated ones for 24 hours. */
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
    subuserId: query.subuserId,
    sessionId: query.sessionId,
    region: query.region,
    asn: query.asn,
    repinned: query.repinned,
    before: cursorAfter(query.cursor) ?? undefined,
    limit: query.limit + 1,
  };
  return new TrafficStoreClient(ctx.env, principal.accountId).listSessions(filters);
}

/** One session with its last 10 requests, from its sub-user's gate. Expired or unknown: 404 `session_not_found`. */
export async function findSession(
  ctx: DomainContext,
  principal: Principal,
  product: SessionProduct,
  id: string,
): Promise<{ session: SessionSnapshot; lastRequests: SessionRequest[] }> {
  const indexed = await visibleSession(ctx, principal, product, id);
  const found = await subuserGate(ctx, indexed.gateName).session(id);
  if (!found || !visible(found.session, now())) throw notFound();
  return found;
}

/**
 * Ends a session early: it is `terminated` (and kept 24 hours), and the next request with its username starts a
 * new session with a new exit IP. Terminating a terminated session answers it as it is.
 */
export async function terminateSession(
  ctx: DomainContext,
  principal: Principal,
  product: SessionProduct,
  id: string,
): Promise<SessionSnapshot> {
  const indexed = await visibleSession(ctx, principal, product, id);
  const terminated = await subuserGate(ctx, indexed.gateName).terminateSession(id);
  if (!terminated || !visible(terminated, now())) throw notFound();
  await new TrafficStoreClient(ctx.env, principal.accountId).upsertSessions([terminated]);
  // The session lives in its gate, not D1: its entry follows the termination, with an id the termination fixes
  // (a retry after a failed write records it once).
  await commit(
    ctx,
    auditStatements(ctx, {
      action: "session.terminated",
      accountId: principal.accountId,
      resourceId: id,
      products: [product],
      after: { status: terminated.status, terminatedAt: terminated.terminatedAt },
      id: terminated.terminatedAt ? idAt("auditEvent", terminated.terminatedAt, id) : undefined,
    }),
  );
  return terminated;
}

async function visibleSession(ctx: DomainContext, principal: Principal, product: SessionProduct, id: string) {
  assertInScope(principal, [product]);
  const session = /^ses_[0-9A-Z]{26}$/.test(id)
    ? await new TrafficStoreClient(ctx.env, principal.accountId).session(id)
    : null;
  if (!session || session.product !== product || !visible(session, now())) throw notFound();
  return session;
}

function visible(session: SessionSnapshot, at: number): boolean {
  return session.status === "active" ? session.expiresAt > at : (session.terminatedAt ?? 0) > at - TERMINATED_KEPT_MS;
}

function notFound(): ApiError {
  return new ApiError("session_not_found");
}

import { and, eq, lt } from "drizzle-orm";
import { replicaDatabase } from "../../db/client";
import { requestTails } from "../../db/schema";
import { MAX_TAILS, RequestTailClient, type TailFilter, type TailRecord } from "../../durable-objects/request-tail";
import type { TrafficProduct } from "../../durable-objects/traffic-store/contract";
import { now, SECOND, toIso } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { logError } from "../../platform/logger";
import { RefreshedValue } from "../../platform/refreshed-value";
import type { DomainContext, Principal } from "../context";
import { assertInScope } from "../scope";
import { findAccountSubuser } from "../subusers/subusers";
import { type OwnedRecord, sampledEntries } from "./aggregate";

export interface TailQuery {
  product: TrafficProduct;
  subuserId?: string;
  domain?: string;
  status?: string;
  errorCode?: string;
}

/** How often an isolate reads which accounts have a tail open: a tail sees records at most this much later. */
const TAILED_ACCOUNTS_PERIOD_MS = SECOND;

/**
 * The accounts that may have a tail open, as this isolate last read them (`request_tails`), from a D1 read replica:
 * every isolate taking usage reads it each second, which the primary's one writer should not carry.
 */
const tailedAccounts = new RefreshedValue(TAILED_ACCOUNTS_PERIOD_MS, async (ctx: DomainContext) => {
  const rows = await replicaDatabase(ctx.env.DB).select({ accountId: requestTails.accountId }).from(requestTails).all();
  return new Set(rows.map((row) => row.accountId));
});

/**
 * Opens a live tail of the account's sampled requests of one product, filtered: the viewer's end of its WebSocket.
 * The key must cover the product, a sub-user filter must name a live sub-user of the account that the key reaches
 * (404 otherwise; a bound key's tail shows its sub-users alone), and the account may have at most `MAX_TAILS` open
 * (409 `tail_limit`). The tail closes when the key that opened it is revoked, expires, loses the product or a
 * sub-user it shows, or its token is rotated away; a member's, when the session that opened it ends (signed out,
 * revoked, at its absolute end) or the member is removed or loses `traffic:read` (`reviewKeyChannels`). The account is listed as tailed once its
 * tail is open, so a delivery that found no tail just before cannot unlist it (`deliverToTails`).
 */
export async function openTail(ctx: DomainContext, principal: Principal, query: TailQuery): Promise<WebSocket> {
  assertInScope(principal, [query.product]);
  if (query.subuserId !== undefined) await findAccountSubuser(ctx, principal, query.subuserId);
  const filter: TailFilter = {
    product: query.product,
    subuser: query.subuserId ?? null,
    subusers: principal.subuserIds,
    domain: query.domain ?? null,
    status: query.status ?? null,
    errorCode: query.errorCode ?? null,
  };
  const { accountId } = principal;
  // A tail lives no longer than the credential that opened it: its channel is reviewed at every change of the key,
  // or of the member (by its guard's id), whose session's hash it carries and whose absolute end is its deadline.
  const opened = await new RequestTailClient(ctx.env, accountId).open(filter, {
    keyId: principal.guardId,
    tokenHash: principal.tokenHash,
    keyExpiresAt: principal.keyExpiresAt,
    tokenReplacedUntil: principal.member?.sessionEndsAt ?? principal.tokenReplacedUntil,
    ...(principal.member?.sessionId ? { session: true } : {}),
  });
  if (!opened.webSocket) {
    throw new ApiError("tail_limit", undefined, {
      limit: { limit: MAX_TAILS, current: opened.open, raisedBy: "closing another tail" },
    });
  }
  const openedAt = now();
  await ctx.db
    .insert(requestTails)
    .values({ accountId, openedAt })
    .onConflictDoUpdate({ target: requestTails.accountId, set: { openedAt } });
  tailedAccounts.update((accounts) => accounts.add(accountId));
  return opened.webSocket;
}

/** A usage record of an account, as the usage route owns it. */
interface AccountRecord {
  accountId: string;
  entry: OwnedRecord;
}

/**
 * Hands the sampled records of a usage batch to the tails of the accounts that have one open: one call per tailed
 * account, none at all while no account of the batch is tailed (the list read at most once a second). Never throws:
 * a tail is a view, and a failure to feed it must not fail the usage post.
 */
export async function deliverToTails(ctx: DomainContext, records: AccountRecord[]): Promise<void> {
  try {
    const tailed = await tailedAccounts.get(ctx);
    if (tailed.size === 0) return;
    const byAccount = Map.groupBy(
      records.filter((record) => tailed.has(record.accountId)),
      (record) => record.accountId,
    );
    await Promise.all(
      [...byAccount].map(([accountId, owned]) =>
        deliver(
          ctx,
          accountId,
          owned.map((record) => record.entry),
        ),
      ),
    );
  } catch (error) {
    logError("tail_delivery_failed", {}, error);
  }
}

/** Delivers an account's records; unlists the account when it has no tail open, unless one opened meanwhile. */
async function deliver(ctx: DomainContext, accountId: string, entries: OwnedRecord[]): Promise<void> {
  const startedAt = now();
  const open = await new RequestTailClient(ctx.env, accountId).deliver(sampledEntries(entries).map(tailRecord));
  if (open > 0) return;
  const { meta } = await ctx.db
    .delete(requestTails)
    .where(and(eq(requestTails.accountId, accountId), lt(requestTails.openedAt, startedAt)))
    .run();
  if (meta.changes > 0) tailedAccounts.update((accounts) => accounts.delete(accountId));
}

function tailRecord({ entry: { record, owner, ts } }: { entry: OwnedRecord }): TailRecord {
  return {
    request_id: record.request_id,
    ts: toIso(ts),
    product: record.product,
    subuser: owner.subuserId,
    method: record.method,
    target_host: record.target_host,
    status: record.status,
    bytes: record.bytes_in + record.bytes_out,
    exit_ip: record.exit_ip,
    exit_geo: record.exit_geo,
    exit_asn: record.exit_asn,
    tag: record.tag,
    error_code: record.error_code,
  };
}

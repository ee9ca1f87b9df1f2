import { and, eq, isNull, sql } from "drizzle-orm";
import { replicaDatabase } from "../../db/client";
import { type GatewayNodeCredentialRow, gatewayNodeCredentials } from "../../db/schema";
import { insertWhere } from "../../db/statements";
import { GatewayHubClient } from "../../durable-objects/gateway-hub";
import { now, SECOND } from "../../platform/clock";
import { randomString, sha256Hex } from "../../platform/crypto";
import { ApiError } from "../../platform/errors";
import { isId, newId } from "../../platform/ids";
import { keysetPage, type PageQuery } from "../../platform/pagination";
import { RefreshedValue } from "../../platform/refreshed-value";
import type { DomainContext } from "../context";

/**
 * Gateway nodes' own credentials (docs/gateway.md, "Node identities"): the operator issues one per node, and every
 * claim made with it on the node contract is bound to that node. Revoking one ends its change feed at once and
 * its calls within a second, so its leases lapse at their expiry.
 */

export const NODE_TOKEN_PATTERN = /^node_[0-9A-Za-z]{64}$/;
/** Live credentials a node may hold at once: enough to roll a new one out before revoking the old. */
export const MAX_LIVE_CREDENTIALS_PER_NODE = 5;
const TOKEN_HINT_LENGTH = 9;
/** How stale an isolate's list of live credentials may be: a revoked one is refused within this. */
const CREDENTIALS_PERIOD_MS = SECOND;
/** How long an unknown token is remembered as unknown, so a stream of bad tokens costs the primary little. */
const UNKNOWN_KEPT_MS = SECOND;
const UNKNOWN_MAX = 1_000;

/** Who calls the node contract: a node, by its credential. */
export interface NodeCaller {
  node: string;
  credentialId: string;
}

/** A new credential for `node`: the token is returned once and kept as its SHA-256. */
export async function issueNodeCredential(
  ctx: DomainContext,
  node: string,
): Promise<{ credential: GatewayNodeCredentialRow; token: string }> {
  const token = `node_${randomString(64)}`;
  const credential: GatewayNodeCredentialRow = {
    id: newId("gatewayNode"),
    node,
    tokenHash: await sha256Hex(token),
    tokenHint: token.slice(0, TOKEN_HINT_LENGTH),
    createdAt: now(),
    revokedAt: null,
  };
  const live = sql`(SELECT COUNT(*) FROM ${gatewayNodeCredentials}
    WHERE ${gatewayNodeCredentials.node} = ${node} AND ${gatewayNodeCredentials.revokedAt} IS NULL)`;
  const inserted = await insertWhere(
    ctx.db,
    gatewayNodeCredentials,
    credential,
    sql`${live} < ${MAX_LIVE_CREDENTIALS_PER_NODE}`,
  ).returning({ id: gatewayNodeCredentials.id });
  if (inserted.length === 0) {
    throw new ApiError("over_limit", `A node holds at most ${MAX_LIVE_CREDENTIALS_PER_NODE} live credentials.`, {
      limit: {
        limit: MAX_LIVE_CREDENTIALS_PER_NODE,
        current: MAX_LIVE_CREDENTIALS_PER_NODE,
        raisedBy: "revoking one the node no longer uses",
      },
    });
  }
  liveCredentials.update((credentials) => credentials.set(credential.tokenHash, callerOf(credential)));
  return { credential, token };
}

/** The credentials issued, newest first, revoked ones included (`node`: one node's alone); never their tokens. */
export function listNodeCredentials(ctx: DomainContext, query: PageQuery & { node?: string }) {
  const page = keysetPage(gatewayNodeCredentials.id, query);
  return ctx.db
    .select()
    .from(gatewayNodeCredentials)
    .where(and(query.node === undefined ? undefined : eq(gatewayNodeCredentials.node, query.node), page.where))
    .orderBy(page.orderBy)
    .limit(page.limit);
}

/**
 * Revokes a credential: its change feed closes before this returns, its calls answer 401 within a second on every
 * isolate, and the shares its node was leased lapse at their expiry, unrenewed. Revoking twice tells the feed again.
 */
export async function revokeNodeCredential(ctx: DomainContext, id: string): Promise<GatewayNodeCredentialRow> {
  const found = isId("gatewayNode", id)
    ? await ctx.db.select().from(gatewayNodeCredentials).where(eq(gatewayNodeCredentials.id, id)).get()
    : undefined;
  if (!found) throw new ApiError("not_found", "No gateway node credential with this id exists.");
  const revokedAt = found.revokedAt ?? now();
  await ctx.db
    .update(gatewayNodeCredentials)
    .set({ revokedAt })
    .where(and(eq(gatewayNodeCredentials.id, id), isNull(gatewayNodeCredentials.revokedAt)));
  liveCredentials.update((credentials) => credentials.delete(found.tokenHash));
  await new GatewayHubClient(ctx.env).disconnectCredential(id);
  return { ...found, revokedAt };
}

/**
 * The node a bearer token is the credential of, or null. Read from this isolate's list of live credentials (a read
 * replica's, refreshed each second); a token the list lacks is looked up on the primary once, so a credential
 * works from the moment it is issued.
 */
export async function nodeForToken(ctx: DomainContext, token: string): Promise<NodeCaller | null> {
  if (!NODE_TOKEN_PATTERN.test(token)) return null;
  const hash = await sha256Hex(token);
  const listed = (await liveCredentials.get(ctx)).get(hash);
  if (listed) return listed;
  const at = now();
  if ((unknownTokens.get(hash) ?? 0) > at) return null;
  const row = await ctx.db
    .select()
    .from(gatewayNodeCredentials)
    .where(and(eq(gatewayNodeCredentials.tokenHash, hash), isNull(gatewayNodeCredentials.revokedAt)))
    .get();
  if (row) return callerOf(row);
  if (unknownTokens.size >= UNKNOWN_MAX) unknownTokens.clear();
  unknownTokens.set(hash, at + UNKNOWN_KEPT_MS);
  return null;
}

const liveCredentials = new RefreshedValue(CREDENTIALS_PERIOD_MS, async (ctx: DomainContext) => {
  const rows = await replicaDatabase(ctx.env.DB)
    .select()
    .from(gatewayNodeCredentials)
    .where(isNull(gatewayNodeCredentials.revokedAt))
    .all();
  return new Map(rows.map((row) => [row.tokenHash, callerOf(row)]));
});
const unknownTokens = new Map<string, number>();

function callerOf(row: GatewayNodeCredentialRow): NodeCaller {
  return { node: row.node, credentialId: row.id };
}

import { sql } from "drizzle-orm";
import { replicaDatabase } from "../../db/client";
import { accounts } from "../../db/schema";
import { MINUTE, now } from "../../platform/clock";
import type { DomainContext } from "../context";

/**
 * Accounts' traffic shard counts (`accounts.traffic_shards`), kept in the isolate a minute: a re-shard reaches every
 * isolate within that. Until then an isolate routes a sub-user's usage by the old count, to a shard it had before
 * (its shard at half the count), and reads shards by the old count (the new shards' first minute is missing from its
 * answers for that while); every reader reads all of a sub-user's shards since the account was first sharded, so
 * no usage is lost or counted twice (docs/scale.md, "Re-sharding an account").
 */
const counts = new Map<string, { shards: number; until: number }>();
const KEPT_MS = MINUTE;
const MAX_ENTRIES = 10_000;

/** The shard counts of accounts: from the isolate's cache, else one D1 query for all of those missing. */
export async function trafficShardCounts(
  ctx: DomainContext,
  accountIds: Iterable<string>,
): Promise<Map<string, number>> {
  const at = now();
  const found = new Map<string, number>();
  const missing: string[] = [];
  for (const accountId of new Set(accountIds)) {
    const entry = counts.get(accountId);
    if (entry && entry.until > at) found.set(accountId, entry.shards);
    else missing.push(accountId);
  }
  if (missing.length === 0) return found;
  // A replica's lag is far inside the minute a count is kept anyway.
  const rows = await replicaDatabase(ctx.env.DB)
    .select({ accountId: accounts.id, trafficShards: accounts.trafficShards })
    .from(accounts)
    .where(sql`${accounts.id} IN (SELECT value FROM json_each(${JSON.stringify(missing)}))`);
  for (const row of rows) found.set(row.accountId, rememberTrafficShards(row.accountId, row.trafficShards));
  // An account D1 does not know (deleted, a test's) has its one store.
  for (const accountId of missing) if (!found.has(accountId)) found.set(accountId, 1);
  return found;
}

/** One account's shard count (cached as `trafficShardCounts`). */
export async function trafficShards(ctx: DomainContext, accountId: string): Promise<number> {
  return (await trafficShardCounts(ctx, [accountId])).get(accountId) ?? 1;
}

/** A count read with other data (the owners' query), kept as if `trafficShardCounts` had read it. */
export function rememberTrafficShards(accountId: string, shards: number): number {
  if (counts.size >= MAX_ENTRIES) counts.clear();
  counts.set(accountId, { shards, until: now() + KEPT_MS });
  return shards;
}

/** A count this isolate just changed: read again at once here (other isolates within `KEPT_MS`). */
export function forgetTrafficShards(accountId: string): void {
  counts.delete(accountId);
}

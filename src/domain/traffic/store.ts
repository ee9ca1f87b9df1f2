import { and, eq, gte, isNotNull, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPools, subuserMonthlyUsage, subusers } from "../../db/schema";
import { AccountTrafficStores, TrafficStoreClient } from "../../durable-objects/traffic-store";
import type { MeterFigures } from "../../durable-objects/traffic-store/contract";
import { now, utcMonth } from "../../platform/clock";
import type { DomainContext } from "../context";
import { trafficShards } from "./traffic-shards";

/** One of the account's traffic stores (shard 0: its own), which starts metering from D1's figures on first use. */
export function accountStore(ctx: DomainContext, accountId: string, shard = 0): TrafficStoreClient {
  return new TrafficStoreClient(ctx.env, accountId, { shard, loadFigures: () => meterFigures(ctx, accountId) });
}

/** All of the account's traffic stores, read as one (one store for all but the busiest accounts). */
export async function accountStores(ctx: DomainContext, accountId: string): Promise<AccountTrafficStores> {
  const shards = await trafficShards(ctx, accountId);
  return new AccountTrafficStores(ctx.env, accountId, shards, () => meterFigures(ctx, accountId));
}

/** Everything the meter starts from: pools, capped and deleted sub-users, capped sub-users' recent months. */
export async function meterFigures(ctx: DomainContext, accountId: string): Promise<MeterFigures> {
  const lastMonth = utcMonth(Date.UTC(new Date(now()).getUTCFullYear(), new Date(now()).getUTCMonth() - 1, 1));
  const [pools, owned, months] = await ctx.db.batch([
    poolsQuery(ctx.db, accountId),
    ctx.db
      .select({ subuserId: subusers.id, capBytes: subusers.trafficLimitBytes, deletedAt: subusers.deletedAt })
      .from(subusers)
      .where(
        and(
          eq(subusers.accountId, accountId),
          or(isNotNull(subusers.trafficLimitBytes), isNotNull(subusers.deletedAt)),
        ),
      ),
    ctx.db
      .select({
        subuserId: subuserMonthlyUsage.subuserId,
        month: subuserMonthlyUsage.month,
        usedBytes: subuserMonthlyUsage.usedBytes,
      })
      .from(subuserMonthlyUsage)
      .innerJoin(subusers, eq(subusers.id, subuserMonthlyUsage.subuserId))
      .where(
        and(
          eq(subusers.accountId, accountId),
          isNotNull(subusers.trafficLimitBytes),
          gte(subuserMonthlyUsage.month, lastMonth),
        ),
      ),
  ]);
  return { pools, subusers: owned, months };
}

export function poolsQuery(db: Database, accountId: string) {
  return db
    .select({
      product: bandwidthPools.product,
      purchasedBytes: bandwidthPools.purchasedBytes,
      usedBytes: bandwidthPools.usedBytes,
      topUpCount: bandwidthPools.topUpCount,
    })
    .from(bandwidthPools)
    .where(eq(bandwidthPools.accountId, accountId));
}

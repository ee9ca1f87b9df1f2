import { and, eq, gte, isNotNull, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPools, subuserMonthlyUsage, subusers } from "../../db/schema";
import { AccountTrafficStores, TrafficStoreClient } from "../../durable-objects/traffic-store";
import type { MeterFigures } from "../../durable-objects/traffic-store/contract";
import { LIFETIME } from "../../platform/cap-periods";
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

/** A sub-user as the meter knows it: its caps and deletion (`MeterFigures.subusers`). */
export const meteredSubuser = {
  subuserId: subusers.id,
  caps: { month: subusers.trafficLimitBytes, day: subusers.dailyLimitBytes, lifetime: subusers.lifetimeLimitBytes },
  deletedAt: subusers.deletedAt,
};

/** A sub-user with any cap: monthly, daily or lifetime (the meter keeps its periods' figures). */
export const hasCap = or(
  isNotNull(subusers.trafficLimitBytes),
  isNotNull(subusers.dailyLimitBytes),
  isNotNull(subusers.lifetimeLimitBytes),
);

/**
 * Everything the meter starts from: pools, capped and deleted sub-users, capped sub-users' recent periods (days are
 * named from their month, so the last month's on; and the lifetime).
 */
export async function meterFigures(ctx: DomainContext, accountId: string): Promise<MeterFigures> {
  const lastMonth = utcMonth(Date.UTC(new Date(now()).getUTCFullYear(), new Date(now()).getUTCMonth() - 1, 1));
  const [pools, owned, months] = await ctx.db.batch([
    poolsQuery(ctx.db, accountId),
    ctx.db
      .select(meteredSubuser)
      .from(subusers)
      .where(and(eq(subusers.accountId, accountId), or(hasCap, isNotNull(subusers.deletedAt)))),
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
          hasCap,
          or(gte(subuserMonthlyUsage.month, lastMonth), eq(subuserMonthlyUsage.month, LIFETIME)),
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

import { and, eq, gte, isNotNull, or } from "drizzle-orm";
import type { Database } from "../../db/client";
import { bandwidthPools, subuserMonthlyUsage, subusers } from "../../db/schema";
import { TrafficStoreClient } from "../../durable-objects/traffic-store";
import type { MeterFigures } from "../../durable-objects/traffic-store/contract";
import { now, utcMonth } from "../../platform/clock";
import type { DomainContext } from "../context";

/** The account's traffic store, which starts metering from D1's figures on first use. */
export function accountStore(ctx: DomainContext, accountId: string): TrafficStoreClient {
  return new TrafficStoreClient(ctx.env, accountId, () => meterFigures(ctx, accountId));
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

import { and, eq, isNull } from "drizzle-orm";
import { accounts, subusers } from "../../db/schema";
import { unchangedSince } from "../../db/statements";
import { isShardCount, MAX_TRAFFIC_SHARDS } from "../../durable-objects/traffic-store";
import { CAP_KINDS, periodsAt } from "../../platform/cap-periods";
import { now } from "../../platform/clock";
import { ApiError } from "../../platform/errors";
import { recordedAccountUpdate } from "../accounts/account-writes";
import { findAccount } from "../accounts/accounts";
import type { DomainContext } from "../context";
import { subuserThresholdEvents } from "../events";
import { settleCapUsageStatements } from "../subusers/cap-usage";
import { commit } from "../unit-of-work";
import { accountStores, hasCap } from "./store";
import { forgetTrafficShards } from "./traffic-shards";

/**
 * Doubles the stores an account's traffic is split over (docs/scale.md, "Re-sharding an account"): only doubling,
 * so each sub-user's new shard is one of two halves of its old one, and its history stays readable where it lies.
 * Safe while usage flows: parts routed by the old count land in the old shard, which every reader still reads.
 *
 * A capped sub-user's periods (month, day, lifetime) are metered by the store its usage goes to, from D1's figures;
 * a period below 80 % of its cap lives in the store alone. So the periods of the capped sub-users, summed over their
 * shards, are written to D1 (the higher figure is kept, thresholds recorded as a settlement does) and told to the
 * stores: a moved sub-user's new shard meters on from there, and its caps still refuse at 100 %.
 */
export async function doubleTrafficShards(
  ctx: DomainContext,
  accountId: string,
  shards: number,
): Promise<{ accountId: string; trafficShards: number }> {
  const account = await findAccount(ctx, accountId);
  if (!isShardCount(shards) || shards !== account.trafficShards * 2) {
    throw invalidShards(
      `must be ${account.trafficShards * 2} (twice the account's ${account.trafficShards}), at most ${MAX_TRAFFIC_SHARDS}.`,
    );
  }
  // Only from the count read: two racing calls cannot set 2 after 4 (the stores of 2 and 3 would go unread).
  await commit(
    ctx,
    [
      unchangedSince(ctx.db, accounts, account),
      ...recordedAccountUpdate(ctx, account, "account.updated", { trafficShards: shards, updatedAt: now() }),
    ],
    { state: () => invalidShards("the account's count changed meanwhile; read it again and double that.") },
  );
  forgetTrafficShards(accountId);
  await handOverCappedPeriods(ctx, accountId);
  const [row] = await ctx.db
    .select({ trafficShards: accounts.trafficShards })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return { accountId, trafficShards: row?.trafficShards ?? shards };
}

function invalidShards(message: string): ApiError {
  return new ApiError("invalid_request", `traffic_shards: ${message}`, {
    details: [{ field: "traffic_shards", message }],
  });
}

async function handOverCappedPeriods(ctx: DomainContext, accountId: string): Promise<void> {
  const capped = await ctx.db
    .select({ id: subusers.id })
    .from(subusers)
    .where(and(eq(subusers.accountId, accountId), hasCap, isNull(subusers.deletedAt)));
  if (capped.length === 0) return;
  const stores = await accountStores(ctx, accountId);
  const at = now();
  const periods = periodsAt(at);
  const usage = await stores.periodUsage(capped.map((subuser) => subuser.id));
  const months = Object.entries(usage).flatMap(([subuserId, figures]) =>
    CAP_KINDS.filter((kind) => figures[kind] > 0).map((kind) => ({
      subuserId,
      month: periods[kind],
      usedBytes: figures[kind],
    })),
  );
  if (months.length === 0) return;
  await commit(ctx, [...settleCapUsageStatements(ctx.db, months, at), subuserThresholdEvents(ctx.db, months, at)]);
  await stores.learnFigures({ months });
}

import { and, eq, inArray, isNull, sql } from "drizzle-orm";
import { accounts, bandwidthPools, subuserMonthlyUsage, subusers, whitelistEntries } from "../../db/schema";
import { SubuserGateClient } from "../../durable-objects/subuser-gate";
import type { GateConfig, PoolFigures } from "../../durable-objects/subuser-gate/contract";
import { periodsAt } from "../../platform/cap-periods";
import { now } from "../../platform/clock";
import { ownerTag } from "../../platform/owner-tag";
import type { BandwidthProduct } from "../../vocabulary";
import type { DomainContext } from "../context";
import { enforcedLimits, type ProductCaps } from "./limits";

/** The gate of one sub-user, addressed by its gateway name; it loads its configuration from D1 on first use. */
export function subuserGate(ctx: DomainContext, name: string): SubuserGateClient {
  return new SubuserGateClient(ctx.env, name, () => loadGateConfig(ctx, name));
}

/** The gate's view of a sub-user, read from D1 (the source of truth); null for an unknown name. */
async function loadGateConfig(ctx: DomainContext, name: string): Promise<GateConfig | null> {
  const row = await ctx.db
    .select({ subuser: subusers, plan: accounts.plan, overrides: accounts.limits })
    .from(subusers)
    .innerJoin(accounts, eq(accounts.id, subusers.accountId))
    .where(eq(subusers.name, name))
    .get();
  if (!row) return null;
  const { subuser, plan, overrides } = row;
  const periods = periodsAt(now());
  const [whitelist, pools, usage] = await ctx.db.batch([
    ctx.db
      .select({ product: whitelistEntries.product, ip: whitelistEntries.ip })
      .from(whitelistEntries)
      .where(and(eq(whitelistEntries.scope, "subuser"), eq(whitelistEntries.scopeId, subuser.id))),
    ctx.db.select().from(bandwidthPools).where(eq(bandwidthPools.accountId, subuser.accountId)),
    ctx.db
      .select({ period: subuserMonthlyUsage.month, usedBytes: subuserMonthlyUsage.usedBytes })
      .from(subuserMonthlyUsage)
      .where(
        and(eq(subuserMonthlyUsage.subuserId, subuser.id), inArray(subuserMonthlyUsage.month, Object.values(periods))),
      ),
  ]);
  const usedIn = (period: string) => usage.find((row) => row.period === period)?.usedBytes ?? 0;
  return {
    subuserId: subuser.id,
    accountId: subuser.accountId,
    name: subuser.name,
    products: subuser.products,
    status: subuser.deletedAt !== null ? "deleted" : subuser.status,
    passwordHash: subuser.passwordHash,
    previousPasswordHash: subuser.previousPasswordHash,
    previousPasswordUntil: subuser.previousPasswordUntil,
    limits: Object.fromEntries(
      subuser.products.map((product) => [
        product,
        spikeCapped(enforcedLimits(plan, overrides, product, subuser), subuser.spikeCapRps),
      ]),
    ),
    whitelist,
    pools: Object.fromEntries(
      pools.map((pool) => [pool.product, { purchasedBytes: pool.purchasedBytes, usedBytes: pool.usedBytes }]),
    ),
    trafficLimitBytes: subuser.trafficLimitBytes,
    monthUsage: { month: periods.month, usedBytes: usedIn(periods.month) },
    dailyLimitBytes: subuser.dailyLimitBytes,
    dayUsage: { day: periods.day, usedBytes: usedIn(periods.day) },
    lifetimeLimitBytes: subuser.lifetimeLimitBytes,
    lifetimeUsedBytes: usedIn(periods.lifetime),
    expiresAt: subuser.expiresAt,
    targetRules: subuser.targetRules,
    ownerTag: await ownerTag(ctx.env.SEALING_KEY, {
      name: subuser.name,
      subuserId: subuser.id,
      accountId: subuser.accountId,
    }),
  };
}

/** A spike's `cap` action, until acknowledged, lowers the requests per second the gate allows. */
function spikeCapped(limits: ProductCaps, capRps: number | null): ProductCaps {
  if (capRps === null) return limits;
  return { ...limits, rps: limits.rps === null ? capRps : Math.min(limits.rps, capRps) };
}

/** Pushes a sub-user's current state to its gate: the next gateway decision uses it. */
export async function syncGate(ctx: DomainContext, name: string): Promise<void> {
  const config = await loadGateConfig(ctx, name);
  if (config) await subuserGate(ctx, name).configure(config);
}

/** After a plan or limits change: every sub-user's gate gets the new caps. */
export async function syncAccountGates(ctx: DomainContext, accountId: string): Promise<void> {
  const rows = await ctx.db.select({ name: subusers.name }).from(subusers).where(eq(subusers.accountId, accountId));
  await Promise.all(rows.map((row) => syncGate(ctx, row.name)));
}

/** A pool became used up or has room again: every live sub-user of the account with that product hears of it. */
export async function pushPoolFigures(
  ctx: DomainContext,
  pool: PoolFigures & { accountId: string; product: BandwidthProduct },
): Promise<void> {
  const names = await ctx.db
    .select({ name: subusers.name })
    .from(subusers)
    .where(
      and(
        eq(subusers.accountId, pool.accountId),
        isNull(subusers.deletedAt),
        sql`EXISTS (SELECT 1 FROM json_each(${subusers.products}) WHERE value = ${pool.product})`,
      ),
    );
  const figures = { purchasedBytes: pool.purchasedBytes, usedBytes: pool.usedBytes };
  await Promise.all(names.map(({ name }) => subuserGate(ctx, name).updatePool(pool.product, figures)));
}

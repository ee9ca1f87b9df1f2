import { and, eq, gt, lte } from "drizzle-orm";
import { accounts, balanceWatches, bandwidthPools, bandwidthPrices, type Plan } from "../../db/schema";
import { HOUR } from "../../platform/clock";
import type { Minor } from "../../platform/money";
import { BYTES_PER_MB } from "../../platform/units";
import type { DomainContext, Principal } from "../context";
import { runUnitOfWork } from "../unit-of-work";
import { usageForecast } from "./forecast";
import { bandwidthTotal } from "./prices";
import { BALANCE_HORIZON_DAYS, lowBalanceStatements } from "./spend";

/** Accounts whose need is refreshed per cron run, the stalest first; each at most once an hour. */
const WATCH_BATCH = 25;
const WATCH_INTERVAL_MS = HOUR;

/**
 * The cron's side of `balance.low`: the need grows with time (a renewal enters the 7-day horizon, usage picks up)
 * without any movement of money, so the accounts watched (every account whose money moved: the first movement
 * makes its watch) have their usage forecast's shortfall refreshed and their balance held against the need, the
 * stalest first, a few a minute (an index range of the watches, and traffic reads only for pools in use). Each
 * movement of money checks its account in its own batch.
 */
export async function watchBalances(ctx: DomainContext, at: number): Promise<number> {
  const due = await ctx.db
    .select({ id: balanceWatches.accountId, plan: accounts.plan })
    .from(balanceWatches)
    .innerJoin(accounts, eq(accounts.id, balanceWatches.accountId))
    .where(lte(balanceWatches.forecastAt, at - WATCH_INTERVAL_MS))
    .orderBy(balanceWatches.forecastAt)
    .limit(WATCH_BATCH);
  for (const account of due) {
    const forecastNeed = await forecastNeedMinor(ctx, account);
    await runUnitOfWork(ctx, [
      ctx.db
        .update(balanceWatches)
        .set({ forecastNeedMinor: forecastNeed, forecastAt: at })
        .where(eq(balanceWatches.accountId, account.id)),
      ...lowBalanceStatements(ctx.db, account.id, at, null),
    ]);
  }
  return due.length;
}

/** What the bandwidth the forecast expects in the next 7 days, beyond what the pools hold, would cost today. */
async function forecastNeedMinor(ctx: DomainContext, account: { id: string; plan: Plan }): Promise<Minor> {
  const pools = await ctx.db
    .select({ pool: bandwidthPools, pricePerGbMinor: bandwidthPrices.pricePerGbMinor })
    .from(bandwidthPools)
    .innerJoin(bandwidthPrices, eq(bandwidthPrices.product, bandwidthPools.product))
    .where(and(eq(bandwidthPools.accountId, account.id), gt(bandwidthPools.usedBytes, 0)));
  let need = 0;
  for (const { pool, pricePerGbMinor } of pools) {
    const forecast = await usageForecast(ctx, jobPrincipal(account), pool);
    const remaining = pool.purchasedBytes - pool.usedBytes;
    need += shortfallCost(forecast.avgDailyBytes * BALANCE_HORIZON_DAYS, remaining, pricePerGbMinor);
  }
  return need;
}

/** The price of the bytes `expected` will use beyond `remaining`, in whole MB (as orders buy), rounded up. */
export function shortfallCost(expectedBytes: number, remainingBytes: number, pricePerGbMinor: Minor): Minor {
  const shortfall = expectedBytes - Math.max(0, remainingBytes);
  if (!(shortfall > 0)) return 0;
  return bandwidthTotal(Math.ceil(shortfall / BYTES_PER_MB) / 1000, pricePerGbMinor);
}

/** The cron reads an account's traffic as the account itself would with a full key (its own, unscoped). */
function jobPrincipal(account: { id: string; plan: Plan }): Principal {
  return {
    keyId: "cron",
    member: null,
    guardId: "cron",
    accountId: account.id,
    plan: account.plan,
    products: null,
    scopes: null,
    subuserIds: null,
    keysOf: null,
    keyExpiresAt: null,
    tokenHash: "",
    tokenReplacedUntil: null,
    accountRevision: "",
    livemode: true,
  };
}

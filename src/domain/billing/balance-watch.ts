import { and, eq, gt, sql } from "drizzle-orm";
import { accounts, balanceWatches, bandwidthPools, bandwidthPrices, type Plan } from "../../db/schema";
import { DAY, HOUR } from "../../platform/clock";
import type { Minor } from "../../platform/money";
import { BYTES_PER_MB } from "../../platform/units";
import type { DomainContext, Principal } from "../context";
import { runUnitOfWork } from "../unit-of-work";
import { usageForecast } from "./forecast";
import { bandwidthTotal } from "./prices";
import { BALANCE_HORIZON_DAYS, lowBalanceStatements } from "./spend";

/** Accounts whose need is refreshed per cron run, the stalest first; each at most once an hour. */
const WATCH_BATCH = 20;
const WATCH_INTERVAL_MS = HOUR;

/**
 * The cron's side of `balance.low`: the need grows with time (a renewal enters the 7-day horizon, usage picks up)
 * without any movement of money, so accounts with something to pay for (bandwidth bought, a renewal due within
 * the horizon) have their usage forecast's shortfall refreshed and their balance held against the need, in small
 * slices. The movements themselves are checked as they commit (`checkLowBalance`).
 */
export async function watchBalances(ctx: DomainContext, at: number): Promise<number> {
  const due = await dueAccounts(ctx, at);
  for (const account of due) {
    const forecastNeed = await forecastNeedMinor(ctx, account);
    await runUnitOfWork(ctx, [
      ctx.db
        .insert(balanceWatches)
        .values({ accountId: account.id, forecastNeedMinor: forecastNeed, forecastAt: at })
        .onConflictDoUpdate({
          target: balanceWatches.accountId,
          set: { forecastNeedMinor: forecastNeed, forecastAt: at },
        }),
      ...lowBalanceStatements(ctx.db, account.id, at),
    ]);
  }
  return due.length;
}

function dueAccounts(ctx: DomainContext, at: number): Promise<Array<{ id: string; plan: Plan }>> {
  const until = at + BALANCE_HORIZON_DAYS * DAY;
  return ctx.db.all<{ id: string; plan: Plan }>(
    sql`SELECT c.account_id AS id, a.plan AS plan FROM (
        SELECT account_id FROM bandwidth_pools WHERE purchased_bytes > 0
        UNION SELECT account_id FROM subscriptions WHERE status = 'active' AND renews_at > ${at} AND renews_at <= ${until}
        UNION SELECT account_id FROM isp_batches
          WHERE status = 'active' AND auto_renew = 1 AND expires_at > ${at} AND expires_at <= ${until}
      ) c JOIN ${accounts} a ON a.id = c.account_id LEFT JOIN ${balanceWatches} w ON w.account_id = c.account_id
      WHERE COALESCE(w.forecast_at, 0) <= ${at - WATCH_INTERVAL_MS}
      ORDER BY COALESCE(w.forecast_at, 0) LIMIT ${WATCH_BATCH}`,
  );
}

/** What the bandwidth the forecast expects in the next 7 days, beyond what the pools hold, would cost today. */
async function forecastNeedMinor(ctx: DomainContext, account: { id: string; plan: Plan }): Promise<Minor> {
  const pools = await ctx.db
    .select({ pool: bandwidthPools, pricePerGbMinor: bandwidthPrices.pricePerGbMinor })
    .from(bandwidthPools)
    .innerJoin(bandwidthPrices, eq(bandwidthPrices.product, bandwidthPools.product))
    .where(and(eq(bandwidthPools.accountId, account.id), gt(bandwidthPools.purchasedBytes, 0)));
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
    accountId: account.id,
    plan: account.plan,
    products: null,
    scopes: null,
    keyExpiresAt: null,
    accountRevision: "",
    livemode: true,
  };
}

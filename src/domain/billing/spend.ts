import { type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  accounts,
  balanceWatches,
  events,
  ispBatches,
  ledgerEntries,
  spendBudgets,
  subscriptions,
} from "../../db/schema";
import { abortIf } from "../../db/statements";
import { addMonths, DAY, utcMonth } from "../../platform/clock";
import { newId } from "../../platform/ids";
import { dispatchedUnlessAwaited, eventTypes } from "../events";
import { type Step, Write } from "../unit-of-work";

/**
 * The ledger reasons that are spend: what the account buys (orders, subscriptions and their renewals and upgrades,
 * ISP renewals and paid replacements). Credits and opening balances are not.
 */
export const SPEND_REASONS = new Set([
  "order",
  "subscription",
  "subscription_upgrade",
  "subscription_renewal",
  "isp_renewal",
  "isp_replacement",
]);

/** A budget's month: the calendar month (UTC) of the charge. */
export interface BudgetMonth {
  month: string;
  from: number;
  to: number;
}

export function budgetMonth(at: number): BudgetMonth {
  const date = new Date(at);
  const from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  return { month: utcMonth(at), from, to: addMonths(from, 1) };
}

/**
 * The spend of the account in the month, in minor units: its ledger's charges, read where the batch stands (an
 * index range of the account's entries by time).
 */
export function monthSpendSql(accountId: string, month: BudgetMonth): SQL<number> {
  return sql<number>`(SELECT COALESCE(-SUM(${ledgerEntries.amountMinor}), 0) FROM ${ledgerEntries}
    WHERE ${ledgerEntries.accountId} = ${accountId}
      AND ${ledgerEntries.createdAt} >= ${month.from} AND ${ledgerEntries.createdAt} < ${month.to}
      AND ${ledgerEntries.reason} IN (${sql.join(
        [...SPEND_REASONS].map((reason) => sql`${reason}`),
        sql`, `,
      )}))`;
}

/** Most thresholds a budget has: one event id is made ready for each. */
export const MAX_BUDGET_THRESHOLDS = 10;

/**
 * What a charge's batch adds after its ledger entry: the hard stop (the batch rolls back, failure `budget`, when
 * the month's spend with this charge passes a hard-stop budget) and the `budget.threshold` events the charge
 * crossed. Both read the ledger inside the batch, so concurrent charges are counted one after the other.
 */
export function budgetStatements(db: Database, accountId: string, at: number): Step[] {
  const month = budgetMonth(at);
  return [
    abortIf(
      db,
      "budget",
      sql`EXISTS (SELECT 1 FROM ${spendBudgets} WHERE ${spendBudgets.accountId} = ${accountId}
        AND ${spendBudgets.hardStop} = 1 AND ${monthSpendSql(accountId, month)} > ${spendBudgets.amountMinor})`,
    ),
    budgetThresholdEvents(db, accountId, at),
  ];
}

/**
 * `budget.threshold` for each threshold the month's spend has reached, once per account, month, budget amount
 * and threshold (a new amount re-arms them). A write for the batch that charges or sets the budget.
 */
export function budgetThresholdEvents(db: Database, accountId: string, at: number) {
  const month = budgetMonth(at);
  const ids = JSON.stringify(Array.from({ length: MAX_BUDGET_THRESHOLDS }, () => newId("event", at)));
  const type = eventTypes.budgetThreshold;
  return insertEvents(
    db,
    sql`SELECT json_extract(${ids}, '$[' || t.key || ']'), b.account_id, ${type},
          json_object('month', ${month.month}, 'threshold_percent', t.value, 'budget_usd', b.amount_minor / 100.0,
            'spent_usd', s.spent / 100.0, 'hard_stop', json(CASE WHEN b.hard_stop THEN 'true' ELSE 'false' END)),
          ${`${type}:`} || b.account_id || ':' || ${month.month} || ':' || b.amount_minor || ':' || t.value,
          ${at}, ${dispatchedUnlessAwaited(sql`b.account_id`, sql`${type}`, at)}
        FROM ${spendBudgets} b, json_each(b.thresholds) t, (SELECT ${monthSpendSql(accountId, month)} AS spent) s
        WHERE b.account_id = ${accountId} AND s.spent * 100 >= b.amount_minor * t.value
        ON CONFLICT (dedupe_key) DO NOTHING`,
  );
}

/**
 * Events recorded by an `INSERT … SELECT` (its SELECT, which handles its conflicts), as a write that marks the
 * request when an endpoint awaits one of them (as `eventStatement` does for one event): the prompt fan-out follows.
 */
function insertEvents(db: Database, select: SQL) {
  const statement = db
    .insert(events)
    .select(select)
    .returning({ awaited: sql<number>`${events.deliveredAt} IS NULL` });
  return new Write(statement, {
    afterCommit: (ctx, recorded) => {
      if (recorded.some((row) => row.awaited)) ctx.awaitedEvents = true;
    },
  });
}

/** How far ahead `balance.low` looks: the renewals due and the usage forecast over the next 7 days. */
export const BALANCE_HORIZON_DAYS = 7;

/**
 * What the next 7 days' renewals will charge: active bandwidth subscriptions renewing in that time (at their
 * current price) and auto-renewing ISP batches expiring in it (their subscription's price, else a month's), but
 * for `paying`, the subscription or batch whose charge is in this very batch.
 */
function renewalsNeedSql(accountId: string, at: number, paying: string | null): SQL<number> {
  const until = at + BALANCE_HORIZON_DAYS * DAY;
  return sql<number>`((SELECT COALESCE(SUM(${subscriptions.priceMinor}), 0) FROM ${subscriptions}
      WHERE ${subscriptions.accountId} = ${accountId} AND ${subscriptions.batchId} IS NULL
        AND ${subscriptions.status} = 'active' AND ${subscriptions.renewsAt} > ${at} AND ${subscriptions.renewsAt} <= ${until}
        AND ${subscriptions.id} IS NOT ${paying})
    + (SELECT COALESCE(SUM(COALESCE(
          (SELECT s.price_minor FROM ${subscriptions} s WHERE s.batch_id = b.id AND s.status IN ('active', 'past_due')),
          b.price_per_ip_month_minor * b.quantity)), 0)
        FROM ${ispBatches} b WHERE b.account_id = ${accountId} AND b.status = 'active' AND b.auto_renew = 1
          AND b.expires_at > ${at} AND b.expires_at <= ${until} AND b.id IS NOT ${paying}))`;
}

function forecastNeedSql(accountId: string): SQL<number> {
  return sql<number>`COALESCE((SELECT ${balanceWatches.forecastNeedMinor} FROM ${balanceWatches}
    WHERE ${balanceWatches.accountId} = ${accountId}), 0)`;
}

/**
 * `balance.low` when the balance is below what the next 7 days need (renewals due, and the usage forecast's
 * shortfall the cron last computed), once per crossing: the watch remembers the crossing was reported, and counts
 * a new one when the balance is back at or above the need (a top-up, a renewal paid). Two statements, at the end
 * of every movement of money (`paying`: what it pays for) and run by the cron.
 */
export function lowBalanceStatements(db: Database, accountId: string, at: number, paying: string | null): Step[] {
  const renewals = renewalsNeedSql(accountId, at, paying);
  const forecast = forecastNeedSql(accountId);
  const type = eventTypes.balanceLow;
  const low = sql`a.balance_minor < n.renewals + n.forecast`;
  const need = sql`(SELECT ${renewals} AS renewals, ${forecast} AS forecast) n`;
  return [
    insertEvents(
      db,
      sql`SELECT ${newId("event", at)}, a.id, ${type},
          json_object('balance_usd', a.balance_minor / 100.0, 'need_usd', (n.renewals + n.forecast) / 100.0,
            'renewals_usd', n.renewals / 100.0, 'forecast_usd', n.forecast / 100.0,
            'horizon_days', ${sql.raw(String(BALANCE_HORIZON_DAYS))}),
          ${`${type}:`} || a.id || ':' || COALESCE(w.crossings, 0), ${at},
          ${dispatchedUnlessAwaited(sql`a.id`, sql`${type}`, at)}
        FROM ${accounts} a LEFT JOIN ${balanceWatches} w ON w.account_id = a.id, ${need}
        WHERE a.id = ${accountId} AND COALESCE(w.low, 0) = 0 AND ${low}
        ON CONFLICT (dedupe_key) DO NOTHING`,
    ),
    db.insert(balanceWatches).select(
      sql`SELECT a.id, 0, 0, ${low}, 0 FROM ${accounts} a, ${need} WHERE a.id = ${accountId}
        ON CONFLICT (account_id) DO UPDATE SET low = excluded.low,
          crossings = crossings + (${balanceWatches.low} = 1 AND excluded.low = 0)`,
    ),
  ];
}

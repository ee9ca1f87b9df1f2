import { SQL, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { bandwidthPools, events, subuserMonthlyUsage, subusers, webhookEndpoints } from "../db/schema";
import { LIFETIME } from "../platform/cap-periods";
import { newId } from "../platform/ids";
import type { DomainContext } from "./context";
import { Write } from "./unit-of-work";

/** Stable event type names (spec §6 categories), ready for webhook delivery. */
export const eventTypes = {
  orderCompleted: "order.completed",
  batchExpiring: "isp_batch.expiring",
  trafficThreshold: "traffic.threshold",
  reportRunCompleted: "report_run.completed",
  reportRunFailed: "report_run.failed",
  webhookTest: "webhook.test",
  subuserNewSource: "subuser.new_source",
  subuserTrafficSpike: "subuser.traffic_spike",
  subuserTrafficSpikeEnded: "subuser.traffic_spike_ended",
  subuserExpired: "subuser.expired",
  budgetThreshold: "budget.threshold",
  balanceLow: "balance.low",
} as const;

/**
 * Records an event once per `dedupeKey` (a job that runs twice records nothing twice): a write for the unit of
 * work that makes the event true. An event no endpoint awaits is recorded as already dispatched; one that an
 * endpoint awaits marks the request (`awaitedEvents`), so only such requests pay the prompt webhook fan-out. With
 * `when`, it is recorded only if that condition holds as the statement runs (its payload and key may then read
 * the rows the condition found, through `from`).
 */
export function eventStatement(
  ctx: DomainContext,
  event: {
    accountId: string;
    type: string;
    payload: Record<string, unknown> | SQL;
    dedupeKey: string | SQL;
    at: number;
    /** An id known beforehand (a run's outcome event, `runEventId`); else a new one. */
    id?: string;
    /** The rows the event is made of (`FROM …`), and the condition for recording it at all. */
    when?: { from: SQL; where: SQL };
  },
) {
  const id = event.id ?? newId("event", event.at);
  const deliveredAt = dispatchedUnlessAwaited(sql`${event.accountId}`, sql`${event.type}`, event.at);
  const insert = event.when
    ? ctx.db.insert(events).select(
        sql`SELECT ${id}, ${event.accountId}, ${event.type},
          ${event.payload instanceof SQL ? event.payload : JSON.stringify(event.payload)}, ${event.dedupeKey}, ${event.at},
          ${deliveredAt} FROM ${event.when.from} WHERE ${event.when.where}`,
      )
    : ctx.db.insert(events).values({
        id,
        accountId: event.accountId,
        type: event.type,
        payload: event.payload,
        dedupeKey: event.dedupeKey,
        createdAt: event.at,
        deliveredAt,
      });
  return new Write(
    insert
      .onConflictDoNothing({ target: events.dedupeKey })
      .returning({ awaited: sql<number>`${events.deliveredAt} IS NULL` }),
    {
      afterCommit: (ctx, recorded) => {
        if (recorded.some((row) => row.awaited)) ctx.awaitedEvents = true;
      },
    },
  );
}

/**
 * An event's `delivered_at` when recorded: null (to be fanned out) while an enabled endpoint of the account
 * subscribes to its type, else already dispatched. An endpoint receives the events recorded after it was enabled.
 */
export function dispatchedUnlessAwaited(accountId: SQL, type: SQL, at: number): SQL {
  return sql`CASE WHEN EXISTS (SELECT 1 FROM ${webhookEndpoints} e WHERE e.account_id = ${accountId}
      AND e.status = 'enabled' AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value IN ('*', ${type})))
    THEN NULL ELSE ${at} END`;
}

/** A pool or a sub-user's cap passing these shares of its size records a `traffic.threshold` event. */
export const TRAFFIC_THRESHOLDS_PERCENT = [80, 100] as const;

/**
 * `traffic.threshold` for pools that passed 80% or 100% used, once per pool, threshold and top-up (a top-up
 * re-arms them). A statement for the batch that records the usage.
 */
export function poolThresholdEvents(db: Database, accountId: string, pools: Array<{ product: string }>, at: number) {
  const candidates = pools.flatMap(({ product }) =>
    TRAFFIC_THRESHOLDS_PERCENT.map((threshold) => ({ id: newId("event", at), product, threshold })),
  );
  return db.insert(events).select(
    sql`SELECT c.value->>'id', p.account_id, ${eventTypes.trafficThreshold},
          json_object('scope', 'pool', 'product', p.product, 'threshold_percent', c.value->>'threshold',
            'gb_purchased', p.purchased_bytes / 1e9, 'gb_used', p.used_bytes / 1e9),
          'traffic.threshold:pool:' || p.account_id || ':' || p.product || ':' || p.top_up_count || ':' || (c.value->>'threshold'),
          ${at}, ${dispatchedUnlessAwaited(sql`p.account_id`, sql`${eventTypes.trafficThreshold}`, at)}
        FROM json_each(${JSON.stringify(candidates)}) c
        JOIN ${bandwidthPools} p ON p.account_id = ${accountId} AND p.product = c.value->>'product'
        WHERE p.purchased_bytes > 0 AND p.used_bytes * 100 >= p.purchased_bytes * (c.value->>'threshold')
        ON CONFLICT (dedupe_key) DO NOTHING`,
  );
}

/** The cap (bytes, null: none) of a sub-user's usage period, by the period's form: `lifetime`, a UTC day, a month. */
export function capOfPeriod(period: SQL): SQL {
  return sql`(CASE WHEN ${period} = ${LIFETIME} THEN ${subusers.lifetimeLimitBytes}
    WHEN length(${period}) = 10 THEN ${subusers.dailyLimitBytes} ELSE ${subusers.trafficLimitBytes} END)`;
}

/**
 * `traffic.threshold` for sub-users that passed 80% or 100% of a cap: `period` says which (`month` and `day` name
 * theirs). Once per period and threshold; a lifetime cap's once per cap value too, since that period never ends: a
 * raised cap is announced again.
 */
export function subuserThresholdEvents(db: Database, usage: Array<{ subuserId: string; month: string }>, at: number) {
  const candidates = usage.flatMap(({ subuserId, month }) =>
    TRAFFIC_THRESHOLDS_PERCENT.map((threshold) => ({ id: newId("event", at), subuserId, month, threshold })),
  );
  const cap = capOfPeriod(sql`u.month`);
  const kind = sql`(CASE WHEN u.month = ${LIFETIME} THEN 'lifetime' WHEN length(u.month) = 10 THEN 'day' ELSE 'month' END)`;
  return db.insert(events).select(
    sql`SELECT c.value->>'id', ${subusers.accountId}, ${eventTypes.trafficThreshold},
          json_patch(
            json_object('scope', 'subuser', 'subuser', ${subusers.id}, 'period', ${kind},
              'threshold_percent', c.value->>'threshold', 'gb_limit', ${cap} / 1e9, 'gb_used', u.used_bytes / 1e9),
            CASE ${kind} WHEN 'month' THEN json_object('month', u.month) WHEN 'day' THEN json_object('day', u.month)
              ELSE '{}' END),
          'traffic.threshold:subuser:' || ${subusers.id} || ':' || u.month
            || CASE WHEN u.month = ${LIFETIME} THEN ':' || ${cap} ELSE '' END || ':' || (c.value->>'threshold'),
          ${at}, ${dispatchedUnlessAwaited(sql`${subusers.accountId}`, sql`${eventTypes.trafficThreshold}`, at)}
        FROM json_each(${JSON.stringify(candidates)}) c
        JOIN ${subusers} ON ${subusers.id} = c.value->>'subuserId'
        JOIN ${subuserMonthlyUsage} u ON u.subuser_id = ${subusers.id} AND u.month = c.value->>'month'
        WHERE ${cap} IS NOT NULL AND u.used_bytes * 100 >= ${cap} * (c.value->>'threshold')
        ON CONFLICT (dedupe_key) DO NOTHING`,
  );
}

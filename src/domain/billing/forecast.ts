import { DAY, now } from "../../platform/clock";
import type { DomainContext, Principal } from "../context";
import { queryTraffic } from "../traffic/traffic";
import type { Pool } from "./pools";

/** The forecast averages the usage of the last 7 days. */
export const FORECAST_WINDOW_DAYS = 7;

/**
 * How far ahead the forecast projects. A pool that lasts longer at the current pace has no run-out in sight: a
 * week's average says nothing about next year, and a tiny average would project past any date a client can print.
 */
export const FORECAST_HORIZON_DAYS = 365;

export interface UsageForecast {
  /** The window averaged: the last 7 days, widened to whole units of the traffic rollups. */
  from: number;
  to: number;
  avgDailyBytes: number;
  /** When the pool runs out at that average; null when nothing was used, nothing is left, or beyond the horizon. */
  exhaustsAt: number | null;
}

/** The pool's projected use, from the exact traffic sums of the last 7 days (the store's rollups). */
export async function usageForecast(ctx: DomainContext, principal: Principal, pool: Pool): Promise<UsageForecast> {
  const at = now();
  const window = await queryTraffic(ctx, principal, {
    product: pool.product,
    from: at - FORECAST_WINDOW_DAYS * DAY,
    to: at,
    groupBy: null,
  });
  const bytes = window.rows.reduce((sum, row) => sum + row.bytesIn + row.bytesOut, 0);
  const to = Math.min(window.to, at);
  const avgDailyBytes = averagePerDay(bytes, to - window.from);
  const exhaustsAt = projectedExhaustion(at, pool.purchasedBytes - pool.usedBytes, avgDailyBytes);
  return { from: window.from, to, avgDailyBytes, exhaustsAt };
}

/** Bytes per day over a span of `spanMs` (0 for an empty span). */
export function averagePerDay(bytes: number, spanMs: number): number {
  return spanMs > 0 ? bytes / (spanMs / DAY) : 0;
}

/**
 * When `remainingBytes` run out at `avgDailyBytes` a day from `at`: null when nothing is used or left, or when
 * that lies past the horizon (the comparison also turns away an infinite or undefined quotient).
 */
export function projectedExhaustion(at: number, remainingBytes: number, avgDailyBytes: number): number | null {
  if (!(avgDailyBytes > 0) || !(remainingBytes > 0)) return null;
  const days = remainingBytes / avgDailyBytes;
  if (!(days <= FORECAST_HORIZON_DAYS)) return null;
  return at + Math.ceil(days * DAY);
}

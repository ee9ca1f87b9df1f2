import { DAY, now } from "../../platform/clock";
import type { DomainContext, Principal } from "../context";
import { queryTraffic } from "../traffic/traffic";
import type { Pool } from "./pools";

/** The forecast averages the usage of the last 7 days. */
export const FORECAST_WINDOW_DAYS = 7;

export interface UsageForecast {
  /** The window averaged: the last 7 days, widened to whole units of the traffic rollups. */
  from: number;
  to: number;
  avgDailyBytes: number;
  /** When the pool runs out at that average; null when nothing was used, or nothing is left. */
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
  const avgDailyBytes = bytes / ((to - window.from) / DAY);
  const remaining = pool.purchasedBytes - pool.usedBytes;
  const exhaustsAt = avgDailyBytes > 0 && remaining > 0 ? at + Math.ceil((remaining / avgDailyBytes) * DAY) : null;
  return { from: window.from, to, avgDailyBytes, exhaustsAt };
}

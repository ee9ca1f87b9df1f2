import { utcDay, utcMonth } from "./clock.ts";

/**
 * The periods a sub-user's traffic caps count usage over, named as usage figures carry them: a UTC month
 * (`2026-11`, the monthly cap), a UTC day (`2026-11-28`, the daily cap) or its whole life (`lifetime`, raised but
 * never reset).
 */
export type CapKind = "month" | "day" | "lifetime";

export const LIFETIME = "lifetime";

export function capKindOf(period: string): CapKind {
  if (period === LIFETIME) return "lifetime";
  return period.length === 10 ? "day" : "month";
}

/** The periods usage at `at` counts toward, one per kind. */
export function periodsAt(at: number): Record<CapKind, string> {
  return { month: utcMonth(at), day: utcDay(at), lifetime: LIFETIME };
}

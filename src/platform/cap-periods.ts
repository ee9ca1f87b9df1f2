import { DAY, utcDay, utcMonth } from "./clock.ts";

/**
 * The periods a sub-user's traffic caps count usage over, named as usage figures carry them: a UTC month
 * (`2026-11`, the monthly cap), a UTC day (`2026-11-28`, the daily cap) or its whole life (`lifetime`, raised but
 * never reset).
 */
export type CapKind = "month" | "day" | "lifetime";

export const CAP_KINDS: readonly CapKind[] = ["month", "day", "lifetime"];

export const LIFETIME = "lifetime";

/** A sub-user's caps in bytes, one per kind (null: none). */
export type CapBytes = Record<CapKind, number | null>;

/** Whether any of the caps is set. */
export function anyCap(caps: CapBytes): boolean {
  return CAP_KINDS.some((kind) => caps[kind] !== null);
}

export function capKindOf(period: string): CapKind {
  if (period === LIFETIME) return "lifetime";
  return period.length === 10 ? "day" : "month";
}

/** The periods usage at `at` counts toward, one per kind. */
export function periodsAt(at: number): Record<CapKind, string> {
  return { month: utcMonth(at), day: utcDay(at), lifetime: LIFETIME };
}

/**
 * Day figures are kept this many days after their day: a day's cap stops refusing when the day ends, and usage
 * reported later than this no longer counts toward its day (it still counts toward its month and the lifetime).
 */
export const DAYS_KEPT = 2;

/** The oldest UTC day whose figure is kept at `at` (`DAYS_KEPT`). */
export function oldestDayKept(at: number): string {
  return utcDay(at - DAYS_KEPT * DAY);
}

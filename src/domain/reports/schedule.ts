import { Cron } from "croner";
import { ApiError } from "../../platform/errors";

/**
 * Schedules are standard 5-field cron expressions in UTC (minute hour day-of-month month day-of-week). croner
 * evaluates them, but it also accepts extensions (`@daily`, `L`, `W`, `#`, `?`, `+`, a sixth field): a pattern of
 * plain fields is checked first, so only standard syntax reaches it. Day-of-month and day-of-week combine with OR, as
 * in Vixie cron. A schedule that never fires (`0 0 31 2 *`) is refused too.
 */
const VALUE = "(?:\\d{1,2}|[A-Za-z]{3})";
const ITEM = `(?:\\*|${VALUE}(?:-${VALUE})?)(?:/\\d{1,2})?`;
const FIELD = `${ITEM}(?:,${ITEM})*`;
const STANDARD_CRON = new RegExp(`^${FIELD}(?: ${FIELD}){4}$`);
export const SCHEDULE_MAX_LENGTH = 100;

function cronOf(expression: string): Cron {
  return new Cron(expression, { mode: "5-part", timezone: "UTC", paused: true });
}

/** The normalized expression (single spaces), or 422 `invalid_cron` saying why. */
export function parseSchedule(expression: string): string {
  const normalized = expression.trim().replace(/\s+/g, " ");
  if (!STANDARD_CRON.test(normalized)) {
    throw new ApiError(
      "invalid_cron",
      "schedule: must be a standard 5-field cron expression (minute hour day-of-month month day-of-week) in UTC; " +
        "extensions such as @daily, L, W, # and ? are not accepted.",
    );
  }
  let next: Date | null;
  try {
    next = cronOf(normalized).nextRun(new Date(0));
  } catch (error) {
    throw new ApiError("invalid_cron", `schedule: ${(error as Error).message.replace(/^CronPattern: /, "")}`);
  }
  if (!next) throw new ApiError("invalid_cron", "schedule: the expression never fires.");
  return normalized;
}

/** The first time strictly after `after` (epoch ms) at which a valid schedule is due; null if it never is again. */
export function nextRunAfter(schedule: string, after: number): number | null {
  return cronOf(schedule).nextRun(new Date(after))?.getTime() ?? null;
}

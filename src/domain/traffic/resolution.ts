import type { Resolution } from "../../durable-objects/traffic-store/contract";
import { RESOLUTION_MS } from "../../durable-objects/traffic-store/contract";
import { DAY } from "../../platform/clock";

/** Traffic ranges may span at most 90 days (spec §8.5). */
export const MAX_RANGE_MS = 90 * DAY;

/**
 * The resolution that answers a range, by the age of its start (spec §8.5): under 24 hours 1 minute, under 14
 * days 5 minutes, under 90 days 1 hour, beyond that 1 day. Data older than that exists only at that resolution.
 */
export function resolutionFor(from: number, at: number): Resolution {
  const age = at - from;
  if (age < DAY) return "1m";
  if (age < 14 * DAY) return "5m";
  if (age < 90 * DAY) return "1h";
  return "1d";
}

/** The range widened to whole units of the resolution: `from` down, `to` up. */
export function alignRange(from: number, to: number, resolution: Resolution): { from: number; to: number } {
  const unit = RESOLUTION_MS[resolution];
  return { from: from - (from % unit), to: to % unit === 0 ? to : to - (to % unit) + unit };
}

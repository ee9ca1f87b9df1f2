import { toIso } from "../../platform/clock";

export interface EventRecord {
  id: string;
  type: string;
  createdAt: number;
  payload: Record<string, unknown>;
}

export interface EventBody {
  id: string;
  type: string;
  created_at: string;
  /** Stripe's field: false for an event of a sandbox twin, true otherwise (an account never changes mode). */
  livemode: boolean;
  data: Record<string, unknown>;
}

/**
 * An event as every delivery carries it and as `GET /events` shows it: the same bytes on every retry, since an
 * event's account — and so its `livemode` — never changes.
 */
export function eventBody(event: EventRecord, livemode: boolean): EventBody {
  return { id: event.id, type: event.type, created_at: toIso(event.createdAt), livemode, data: event.payload };
}

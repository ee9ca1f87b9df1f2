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
  data: Record<string, unknown>;
}

/** An event as every delivery carries it and as `GET /events` shows it: the same bytes on every retry. */
export function eventBody(event: EventRecord): EventBody {
  return { id: event.id, type: event.type, created_at: toIso(event.createdAt), data: event.payload };
}

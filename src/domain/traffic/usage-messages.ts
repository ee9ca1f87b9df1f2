import {
  type Cell,
  type CellRow,
  cellOf,
  cellRow,
  type GateUsage as GateSessions,
  type RequestSample,
  type SampleCandidate,
  type SessionRequest,
  type SessionUsage,
} from "../../../durable-objects/traffic-types";

export type { Cell, CellRow, RequestSample, SampleCandidate, SessionRequest, SessionUsage };
export { cellRow };

/**
 * What a usage batch becomes on the `usage` queue: per account, rollup cells (usage summed per minute and
 * dimensions), sticky-session usage per sub-user gate, and request-log sample candidates, packed in parts of at
 * most ~100 KB. A message's `key` (`batch:account:part`) is the same whenever the same batch is posted again, so
 * every store applies it once.
 */
export type GateUsage = GateSessions;

export interface UsageMessage {
  key: string;
  batchId: string;
  accountId: string;
  part: number;
  cells: Cell[];
  gates: GateUsage[];
  samples: SampleCandidate[];
}

/** A usage message as sent: its cells as rows. */
export type SentUsageMessage = Omit<UsageMessage, "cells"> & { cells: CellRow[] };

/** A message as the consumer reads it; cells sent as named objects (before rows) are read as they are. */
export function receivedUsageMessage(sent: SentUsageMessage | UsageMessage): UsageMessage {
  return { ...sent, cells: sent.cells.map((cell) => (Array.isArray(cell) ? cellOf(cell) : cell)) };
}

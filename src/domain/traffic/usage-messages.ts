import type {
  Cell,
  GateUsage as GateSessions,
  RequestSample,
  SampleCandidate,
  SessionRequest,
  SessionUsage,
} from "../../../durable-objects/traffic-types";

export type { Cell, RequestSample, SampleCandidate, SessionRequest, SessionUsage };

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

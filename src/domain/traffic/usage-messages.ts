import type {
  Cell,
  GateUsage as GateSessions,
  RequestSample,
  SampleCandidate,
  SessionRequest,
  SessionUsage,
  TrafficProduct,
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

/**
 * A cell as a message carries it: the fields in `Cell`'s order, without their names (half the bytes to serialize,
 * queue and parse; nearly every record is its own cell).
 */
export type CellRow = [
  minute: number,
  product: TrafficProduct,
  subuserId: string,
  region: string,
  asn: number,
  tag: string,
  carrier: string,
  ip: string,
  bytesIn: number,
  bytesOut: number,
  requests: number,
  errors: number,
];

/** A usage message as sent: its cells as rows. */
export type SentUsageMessage = Omit<UsageMessage, "cells"> & { cells: CellRow[] };

export function cellRow(c: Cell): CellRow {
  return [
    c.minute,
    c.product,
    c.subuserId,
    c.region,
    c.asn,
    c.tag,
    c.carrier,
    c.ip,
    c.bytesIn,
    c.bytesOut,
    c.requests,
    c.errors,
  ];
}

/** A message as the consumer reads it; cells sent as named objects (before rows) are read as they are. */
export function receivedUsageMessage(sent: SentUsageMessage | UsageMessage): UsageMessage {
  return { ...sent, cells: sent.cells.map((cell) => (Array.isArray(cell) ? cellOf(cell) : cell)) };
}

function cellOf([
  minute,
  product,
  subuserId,
  region,
  asn,
  tag,
  carrier,
  ip,
  bytesIn,
  bytesOut,
  requests,
  errors,
]: CellRow): Cell {
  return { minute, product, subuserId, region, asn, tag, carrier, ip, bytesIn, bytesOut, requests, errors };
}
